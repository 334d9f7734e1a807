package apidoc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// These tests hold the document to what third-party tools read the same
// way, so that a client generated or a mock served from it by any of them
// matches the API: Prism, Redocly and libopenapi-validator. The server
// package's tests check it against the live responses; these check the
// document alone.

func load(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(Load().JSON, &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	return doc
}

// node is one JSON value of the document and its JSON pointer.
type node struct {
	ptr    string
	parent string // the key this value sits under ("" for array items and the root)
	value  any
}

// walk visits every value of the document, depth first, object keys in
// sorted order so that failures come out the same way each run.
func walk(v any, visit func(node)) {
	var rec func(ptr, parent string, v any)
	rec = func(ptr, parent string, v any) {
		visit(node{ptr, parent, v})
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				rec(ptr+"/"+escape(k), k, v[k])
			}
		case []any:
			for i, c := range v {
				rec(fmt.Sprintf("%s/%d", ptr, i), "", c)
			}
		}
	}
	rec("#", "", v)
}

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// nameMaps are the keys whose object value maps names (of properties,
// paths, components, media types...) to values, so its keys are names,
// never keywords: a property called "items" is not the items keyword.
var nameMaps = map[string]bool{
	"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
	"paths": true, "webhooks": true, "schemas": true, "responses": true, "parameters": true,
	"headers": true, "securitySchemes": true, "requestBodies": true, "examples": true,
	"links": true, "callbacks": true, "pathItems": true, "content": true, "encoding": true,
	"variables": true, "mapping": true,
}

// keywords calls visit for every object key of the document that is a
// keyword (not a name in a name map), with the object holding it.
func keywords(doc any, visit func(ptr, key string, obj map[string]any)) {
	walk(doc, func(n node) {
		obj, ok := n.value.(map[string]any)
		if !ok || nameMaps[n.parent] {
			return
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			visit(n.ptr+"/"+escape(k), k, obj)
		}
	})
}

// TestReadTheSameEverywhere fails on what makes validators disagree about
// the document. jsonSchemaDialect (even set to 3.1's own default) makes
// Prism 5 skip body validation altogether, and Prism validates with an
// older JSON Schema draft than 3.1's 2020-12, so the keywords new in 2019-09
// and 2020-12 are ignored or misread there: prefixItems with items: false
// failed every GET /usage/current. The document keeps to what both read
// alike.
func TestReadTheSameEverywhere(t *testing.T) {
	doc := load(t)
	if v, ok := doc["jsonSchemaDialect"]; ok {
		t.Errorf("jsonSchemaDialect = %v: Prism then skips body validation; 3.1's default dialect needs no statement", v)
	}
	if v := doc["openapi"]; v != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", v)
	}
	newer := map[string]bool{
		"prefixItems": true, "unevaluatedProperties": true, "unevaluatedItems": true,
		"dependentRequired": true, "dependentSchemas": true, "minContains": true, "maxContains": true,
		"$dynamicRef": true, "$dynamicAnchor": true, "$recursiveRef": true, "$recursiveAnchor": true,
		"$schema": true, "$vocabulary": true,
	}
	keywords(doc, func(ptr, key string, obj map[string]any) {
		if newer[key] {
			t.Errorf("%s: %s is read differently (or not at all) by validators of older JSON Schema drafts", ptr, key)
		}
		if key == "items" {
			switch obj[key].(type) {
			case bool:
				t.Errorf("%s: items as a boolean schema; bound the array with maxItems instead", ptr)
			case []any:
				t.Errorf("%s: items as an array is a tuple before 2020-12 and invalid after", ptr)
			}
		}
	})
}

// refs lists the $ref values found in v.
func refs(v any) []string {
	var out []string
	walk(v, func(n node) {
		if obj, ok := n.value.(map[string]any); ok {
			if r, ok := obj["$ref"].(string); ok {
				out = append(out, r)
			}
		}
	})
	return out
}

// TestComponentsUsed fails on a component that nothing outside the
// components reaches, directly or through other components: Redocly's
// no-unused-components, and a sign that a status, header or body the
// server sends is attached to no operation.
func TestComponentsUsed(t *testing.T) {
	doc := load(t)
	components, _ := doc["components"].(map[string]any)
	outside := map[string]any{}
	for k, v := range doc {
		if k != "components" {
			outside[k] = v
		}
	}
	used := map[string]bool{}
	queue := refs(outside)
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		if used[r] {
			continue
		}
		used[r] = true
		kind, name, ok := strings.Cut(strings.TrimPrefix(r, "#/components/"), "/")
		if !strings.HasPrefix(r, "#/components/") || !ok {
			continue
		}
		if c, ok := components[kind].(map[string]any)[unescape(name)]; ok {
			queue = append(queue, refs(c)...)
		} else {
			t.Errorf("$ref %s: no such component", r)
		}
	}
	// Security schemes are named by security requirements, not $ref.
	var reqs []any
	if s, ok := doc["security"].([]any); ok {
		reqs = append(reqs, s...)
	}
	walk(map[string]any{"paths": doc["paths"], "webhooks": doc["webhooks"]}, func(n node) {
		if obj, ok := n.value.(map[string]any); ok && !nameMaps[n.parent] {
			if s, ok := obj["security"].([]any); ok {
				reqs = append(reqs, s...)
			}
		}
	})
	for _, r := range reqs {
		for name := range r.(map[string]any) {
			used["#/components/securitySchemes/"+escape(name)] = true
		}
	}
	for _, kind := range sortedKeys(components) {
		for _, name := range sortedKeys(components[kind].(map[string]any)) {
			if r := "#/components/" + kind + "/" + escape(name); !used[r] {
				t.Errorf("%s is defined but attached to nothing", r)
			}
		}
	}
}

func unescape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~1", "/"), "~0", "~")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestNoInlineCopies fails on a header, parameter or response written out
// where a component says the same ("required": false, the default, aside):
// Idempotent-Replayed was, and the component stood unused.
func TestNoInlineCopies(t *testing.T) {
	doc := load(t)
	components := doc["components"].(map[string]any)
	normal := func(v any) any {
		obj, ok := v.(map[string]any)
		if !ok {
			return v
		}
		c := map[string]any{}
		for k, x := range obj {
			if !(k == "required" && x == false) {
				c[k] = x
			}
		}
		return c
	}
	check := func(ptr, kind string, v any) {
		obj, ok := v.(map[string]any)
		if !ok || obj["$ref"] != nil {
			return
		}
		for _, name := range sortedKeys(components[kind].(map[string]any)) {
			if reflect.DeepEqual(normal(obj), normal(components[kind].(map[string]any)[name])) {
				t.Errorf("%s repeats #/components/%s/%s; refer to it with $ref", ptr, kind, escape(name))
			}
		}
	}
	walk(doc, func(n node) {
		if n.ptr == "#/components/"+n.parent {
			return // the components themselves
		}
		obj, _ := n.value.(map[string]any)
		switch n.parent {
		case "headers":
			for _, k := range sortedKeys(obj) {
				check(n.ptr+"/"+escape(k), "headers", obj[k])
			}
		case "responses":
			for _, k := range sortedKeys(obj) {
				check(n.ptr+"/"+escape(k), "responses", obj[k])
			}
		case "parameters":
			list, _ := n.value.([]any)
			for i, p := range list {
				check(fmt.Sprintf("%s/%d", n.ptr, i), "parameters", p)
			}
		}
	})
}

// TestTagsAndInfo fails on a tag without a description, an operation's tag
// the document does not declare, a declared tag no operation has, and an
// info without a licence (Redocly's tag-description, info-license and
// info-license-strict).
func TestTagsAndInfo(t *testing.T) {
	doc := load(t)
	declared := map[string]bool{}
	for i, tag := range doc["tags"].([]any) {
		tag := tag.(map[string]any)
		name, _ := tag["name"].(string)
		declared[name] = false
		if d, _ := tag["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("tag %d (%s) has no description", i, name)
		}
	}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			op, ok := op.(map[string]any)
			if !ok {
				continue
			}
			tags, _ := op["tags"].([]any)
			if len(tags) == 0 {
				t.Errorf("%s %s has no tag", strings.ToUpper(method), path)
			}
			for _, tag := range tags {
				if _, ok := declared[tag.(string)]; !ok {
					t.Errorf("%s %s: tag %q is not declared under tags", strings.ToUpper(method), path, tag)
				}
				declared[tag.(string)] = true
			}
		}
	}
	for name, seen := range declared {
		if !seen {
			t.Errorf("tag %q is declared but no operation has it", name)
		}
	}
	info := doc["info"].(map[string]any)
	lic, _ := info["license"].(map[string]any)
	if lic == nil {
		t.Fatal("info has no license")
	}
	if name, _ := lic["name"].(string); name == "" {
		t.Error("info.license has no name")
	}
	_, hasID := lic["identifier"]
	_, hasURL := lic["url"]
	if hasID == hasURL {
		t.Error("info.license wants one of identifier and url (3.1 allows not both)")
	}
}

// TestRequiredPropertiesDefined fails on a schema whose required names a
// property that neither it nor its allOf members define (Redocly's
// no-required-schema-properties-undefined): a conditional "then" with
// required says what it requires.
func TestRequiredPropertiesDefined(t *testing.T) {
	doc := load(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var defined func(s map[string]any, name string, depth int) bool
	defined = func(s map[string]any, name string, depth int) bool {
		if r, ok := s["$ref"].(string); ok && depth < 8 {
			if target, ok := schemas[strings.TrimPrefix(r, "#/components/schemas/")].(map[string]any); ok {
				return defined(target, name, depth+1)
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			if _, ok := props[name]; ok {
				return true
			}
		}
		all, _ := s["allOf"].([]any)
		for _, sub := range all {
			if sub, ok := sub.(map[string]any); ok && defined(sub, name, depth+1) {
				return true
			}
		}
		return false
	}
	keywords(doc, func(ptr, key string, obj map[string]any) {
		req, ok := obj[key].([]any)
		if key != "required" || !ok {
			return
		}
		for _, name := range req {
			if !defined(obj, name.(string), 0) {
				t.Errorf("%s names %q, which this schema does not define", ptr, name)
			}
		}
	})
}

// TestHeadBesideEveryGet: ServeMux answers HEAD wherever a GET is routed
// and lists it in Allow, so the document has a HEAD operation beside every
// GET (and none without one). It is the GET without the body: the same
// parameters, security, tags and extensions, the same statuses with the
// same headers, and no content.
func TestHeadBesideEveryGet(t *testing.T) {
	doc := load(t)
	responses := doc["components"].(map[string]any)["responses"].(map[string]any)
	resolve := func(r any) map[string]any {
		m := r.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			return responses[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
		}
		return m
	}
	paths := doc["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		item := paths[path].(map[string]any)
		get, _ := item["get"].(map[string]any)
		head, _ := item["head"].(map[string]any)
		switch {
		case get == nil && head == nil:
			continue
		case head == nil:
			t.Errorf("%s has GET but no HEAD, which the server answers", path)
			continue
		case get == nil:
			t.Errorf("%s has HEAD but no GET", path)
			continue
		}
		for _, k := range []string{"parameters", "security", "tags", "x-locrisk-operation", "x-locrisk-scope"} {
			if !reflect.DeepEqual(get[k], head[k]) {
				t.Errorf("HEAD %s: %s %v, GET has %v", path, k, head[k], get[k])
			}
		}
		if !strings.Contains(head["description"].(string), "HEAD") {
			t.Errorf("HEAD %s: the description does not say it is HEAD", path)
		}
		if head["operationId"] == get["operationId"] {
			t.Errorf("HEAD %s: operationId %v is GET's", path, head["operationId"])
		}
		gr, hr := get["responses"].(map[string]any), head["responses"].(map[string]any)
		if !slices.Equal(sortedKeys(gr), sortedKeys(hr)) {
			t.Errorf("HEAD %s answers %v, GET %v", path, sortedKeys(hr), sortedKeys(gr))
		}
		for _, status := range sortedKeys(hr) {
			h := resolve(hr[status])
			if _, ok := h["content"]; ok {
				t.Errorf("HEAD %s %s has content; a HEAD answer has no body", path, status)
			}
			if g, ok := gr[status]; ok && !reflect.DeepEqual(h["headers"], resolve(g)["headers"]) {
				t.Errorf("HEAD %s %s: headers %v, GET's are %v", path, status, h["headers"], resolve(g)["headers"])
			}
		}
	}
}
