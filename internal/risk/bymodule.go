package risk

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ModuleEntry is one module's value in a ByModule.
type ModuleEntry[T any] struct {
	Module string
	Value  T
}

// ByModule holds one value per module in registry order and is written as a
// JSON object keyed by module, in that order. Decoding keeps the document's
// order.
type ByModule[T any] []ModuleEntry[T]

// Get returns the value for module.
func (b ByModule[T]) Get(module string) (T, bool) {
	for _, e := range b {
		if e.Module == module {
			return e.Value, true
		}
	}
	var zero T
	return zero, false
}

// Set replaces module's value, or appends it.
func (b *ByModule[T]) Set(module string, v T) {
	for i := range *b {
		if (*b)[i].Module == module {
			(*b)[i].Value = v
			return
		}
	}
	*b = append(*b, ModuleEntry[T]{module, v})
}

// MarshalJSON writes the object in registry order.
func (b ByModule[T]) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range b {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(e.Module)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads an object of module values, keeping its order.
func (b *ByModule[T]) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*b = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("module values: want a JSON object, got %v", tok)
	}
	out := ByModule[T]{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("module values: want a module key, got %v", tok)
		}
		var v T
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("module %s: %w", key, err)
		}
		out.Set(key, v) // a repeated key keeps its first position and last value
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*b = out
	return nil
}
