package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestReadmeExamplesNumbered: the README's API examples ("# 1. ...") are
// numbered as docs/api.md numbers the operations, and in that order.
func TestReadmeExamplesNumbered(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	prev := 0
	for _, m := range regexp.MustCompile(`(?m)^# (\d+)\. `).FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		if n != prev+1 {
			t.Errorf("README example %d follows example %d", n, prev)
		}
		prev = n
	}
	if prev < 17 {
		t.Errorf("README numbers %d examples, want the 17 operations at least", prev)
	}
}
