-- Migration 13: report bodies stored compressed, their scores beside them
-- (schema version 13; docs/operations.md, The database).
--
-- A report's JSON is about 40 kB, most of it the labels, units and sources
-- every report repeats; new bodies are stored compressed against a
-- dictionary trained on real reports (internal/reportcodec), about 7 kB
-- each. body_codec names how a body is stored: NULL for plain JSON text,
-- as every body written before this version is and stays, else the
-- codec's name (s2d1). The API decodes either to the same bytes.
--
-- The summary scores are kept in columns, so a batch's items list them
-- without reading any body, and an operator finds a report's scores in the
-- sqlite3 shell without decoding one. The bodies already stored are plain
-- JSON, so their scores are copied out of them here, once.

ALTER TABLE reports ADD COLUMN body_codec TEXT;
ALTER TABLE reports ADD COLUMN overall_score INTEGER;
ALTER TABLE reports ADD COLUMN risk_level TEXT;
-- A JSON object, module key to score (null where no data covers the
-- module), in the report's order: json_extract(module_scores, '$.wildfire').
ALTER TABLE reports ADD COLUMN module_scores TEXT;

UPDATE reports SET
    overall_score = json_extract(body, '$.summary.overallScore'),
    risk_level = json_extract(body, '$.summary.riskLevel'),
    module_scores = json_extract(body, '$.summary.moduleScores')
WHERE body_codec IS NULL AND json_valid(body)
    AND json_type(body, '$.summary.overallScore') = 'integer';
