package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// A minimal reader for the header of a netCDF classic file (CDF-1, or
// CDF-2 with 64-bit offsets), as the format specification lays it out:
// magic, record count, dimension list, global attributes, variables.
// Only what the clip needs is kept: dimensions, each variable's
// dimensions, type, attributes and data offset.

type ncDim struct {
	Name string
	Len  int
}

type ncAttr struct {
	Name   string
	Type   int
	Values []float64 // numeric attributes
	Text   string    // char attributes
}

type ncVar struct {
	Name   string
	Dims   []int // indexes into header.Dims
	Attrs  []ncAttr
	Type   int
	Size   int64
	Offset int64
}

type ncHeader struct {
	Version int
	NumRecs int
	Dims    []ncDim
	Attrs   []ncAttr
	Vars    []ncVar
}

const (
	ncByte   = 1
	ncChar   = 2
	ncShort  = 3
	ncInt    = 4
	ncFloat  = 5
	ncDouble = 6

	tagDimension = 0x0A
	tagVariable  = 0x0B
	tagAttribute = 0x0C
)

var typeSize = map[int]int{ncByte: 1, ncChar: 1, ncShort: 2, ncInt: 4, ncFloat: 4, ncDouble: 8}

type ncReader struct {
	b   []byte
	off int
	err error
}

func (r *ncReader) u32() uint32 {
	if r.err != nil {
		return 0
	}
	if r.off+4 > len(r.b) {
		r.err = errors.New("netCDF header truncated")
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

// count reads a non-negative element count no larger than limit.
func (r *ncReader) count(limit int) int {
	v := r.u32()
	if r.err == nil && int64(v) > int64(limit) {
		r.err = fmt.Errorf("netCDF header: count %d at byte %d is implausible", v, r.off-4)
		return 0
	}
	return int(v)
}

func (r *ncReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	padded := (n + 3) &^ 3
	if n < 0 || r.off+padded > len(r.b) {
		r.err = errors.New("netCDF header truncated")
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += padded
	return s
}

func (r *ncReader) name() string { return string(r.bytes(r.count(1 << 16))) }

func (r *ncReader) attrs() []ncAttr {
	tag, n := r.u32(), r.count(1<<16)
	if r.err != nil || (tag == 0 && n == 0) {
		return nil
	}
	if tag != tagAttribute {
		r.err = fmt.Errorf("netCDF header: attribute list tag %#x", tag)
		return nil
	}
	var out []ncAttr
	for i := 0; i < n && r.err == nil; i++ {
		a := ncAttr{Name: r.name(), Type: int(r.u32())}
		size, ok := typeSize[a.Type]
		if !ok {
			r.err = fmt.Errorf("netCDF header: attribute %s has type %d", a.Name, a.Type)
			return nil
		}
		k := r.count(1 << 24)
		raw := r.bytes(k * size)
		if r.err != nil {
			return nil
		}
		if a.Type == ncChar {
			a.Text = string(raw)
		} else {
			for j := 0; j < k; j++ {
				a.Values = append(a.Values, number(a.Type, raw[j*size:]))
			}
		}
		out = append(out, a)
	}
	return out
}

func number(typ int, b []byte) float64 {
	switch typ {
	case ncByte:
		return float64(int8(b[0]))
	case ncShort:
		return float64(int16(binary.BigEndian.Uint16(b)))
	case ncInt:
		return float64(int32(binary.BigEndian.Uint32(b)))
	case ncFloat:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case ncDouble:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	return 0
}

// parseNetCDFHeader decodes the header at the start of b.
func parseNetCDFHeader(b []byte) (*ncHeader, error) {
	if len(b) < 4 || string(b[:3]) != "CDF" || (b[3] != 1 && b[3] != 2) {
		return nil, errors.New("not a netCDF classic file (magic CDF\\x01 or CDF\\x02)")
	}
	h := &ncHeader{Version: int(b[3])}
	r := &ncReader{b: b, off: 4}
	h.NumRecs = int(r.u32())
	tag, n := r.u32(), r.count(1<<16)
	if r.err == nil && !(tag == 0 && n == 0) {
		if tag != tagDimension {
			return nil, fmt.Errorf("netCDF header: dimension list tag %#x", tag)
		}
		for i := 0; i < n && r.err == nil; i++ {
			h.Dims = append(h.Dims, ncDim{Name: r.name(), Len: r.count(1 << 30)})
		}
	}
	h.Attrs = r.attrs()
	tag, n = r.u32(), r.count(1<<16)
	if r.err == nil && !(tag == 0 && n == 0) {
		if tag != tagVariable {
			return nil, fmt.Errorf("netCDF header: variable list tag %#x", tag)
		}
		for i := 0; i < n && r.err == nil; i++ {
			v := ncVar{Name: r.name()}
			nd := r.count(64)
			for j := 0; j < nd && r.err == nil; j++ {
				d := r.count(len(h.Dims) - 1)
				v.Dims = append(v.Dims, d)
			}
			v.Attrs = r.attrs()
			v.Type = int(r.u32())
			v.Size = int64(r.u32())
			if h.Version == 2 {
				hi, lo := r.u32(), r.u32()
				v.Offset = int64(hi)<<32 | int64(lo)
			} else {
				v.Offset = int64(r.u32())
			}
			if _, ok := typeSize[v.Type]; r.err == nil && !ok {
				return nil, fmt.Errorf("netCDF header: variable %s has type %d", v.Name, v.Type)
			}
			h.Vars = append(h.Vars, v)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return h, nil
}

func (h *ncHeader) variable(name string) (*ncVar, bool) {
	for i := range h.Vars {
		if h.Vars[i].Name == name {
			return &h.Vars[i], true
		}
	}
	return nil, false
}

// shape is the variable's dimension lengths.
func (h *ncHeader) shape(v *ncVar) []int {
	s := make([]int, len(v.Dims))
	for i, d := range v.Dims {
		s[i] = h.Dims[d].Len
	}
	return s
}

func (v *ncVar) attr(name string) (ncAttr, bool) {
	for _, a := range v.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return ncAttr{}, false
}
