-- Migration 7 is another change's (issue 15); this placeholder only keeps
-- the numbering gapless on this branch and is replaced by that migration
-- when the branches are merged.
SELECT 1;
