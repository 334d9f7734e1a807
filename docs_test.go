package main

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestReadmeExamplesNumbered: the README's API examples ("# 1. ...") are
// numbered as docs/api.md numbers the operations, each operation once.
// The README groups them by topic (a batch listing, 18, sits with the
// batches), so the numbers rise within each example block and together
// are 1 to the last operation with none missing.
func TestReadmeExamplesNumbered(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, block := range regexp.MustCompile("(?s)```sh\n.*?```").FindAllString(string(b), -1) {
		prev := 0
		for _, m := range regexp.MustCompile(`(?m)^# (\d+)\. `).FindAllStringSubmatch(block, -1) {
			n, _ := strconv.Atoi(m[1])
			if n <= prev {
				t.Errorf("README example %d follows example %d in one block", n, prev)
			}
			prev = n
			all = append(all, n)
		}
	}
	slices.Sort(all)
	for i, n := range all {
		if n != i+1 {
			t.Fatalf("README examples are numbered %v, want 1 to %d each once", all, len(all))
		}
	}
	if len(all) < 20 {
		t.Errorf("README numbers %d examples, want the 20 operations at least", len(all))
	}
}
