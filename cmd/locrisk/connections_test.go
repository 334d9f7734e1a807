package main

import "testing"

func TestConnectionCap(t *testing.T) {
	tests := []struct {
		want    int
		limit   uint64
		n       int
		lowered bool
	}{
		{1024, 0, 1024, false},
		{1024, 1 << 20, 1024, false},
		{1024, 1024, 1024 - fdHeadroom, true},
		{1024, 1024 + fdHeadroom, 1024, false},
		{1024, 1025 + fdHeadroom, 1024, false},
		{1024, 100, 1, true},
	}
	for _, tt := range tests {
		n, lowered := connectionCap(tt.want, tt.limit)
		if n != tt.n || lowered != tt.lowered {
			t.Errorf("connectionCap(%d, %d) = %d, %v; want %d, %v", tt.want, tt.limit, n, lowered, tt.n, tt.lowered)
		}
	}
}
