package secretbox

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testKey(fill byte) []byte { return bytes.Repeat([]byte{fill}, KeySize) }

func mustBox(t *testing.T, key []byte) *Box {
	t.Helper()
	b, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	const plain, owner = "whsec_0123456789abcdef", "whe_1"
	b := mustBox(t, testKey(1))
	s1, s2 := b.Seal(plain, owner), b.Seal(plain, owner)
	if !IsSealed(s1) || IsSealed(plain) {
		t.Fatalf("IsSealed(%q) = %v, IsSealed(%q) = %v", s1, IsSealed(s1), plain, IsSealed(plain))
	}
	if strings.Contains(s1, plain) || strings.Contains(s1, base64.RawStdEncoding.EncodeToString([]byte(plain))) {
		t.Errorf("sealed value %q shows the secret", s1)
	}
	if s1 == s2 {
		t.Error("two seals of one secret are equal: the nonce is not random")
	}
	for _, s := range []string{s1, s2} {
		if got, err := b.Open(s, owner); err != nil || got != plain {
			t.Errorf("Open = %q, %v; want %q", got, err, plain)
		}
	}

	flipped := []byte(s1)
	flipped[len(flipped)-3] ^= 1
	tests := []struct {
		name, sealed, owner string
		box                 *Box
	}{
		{"another key", s1, owner, mustBox(t, testKey(2))},
		{"another owner", s1, "whe_2", b},
		{"changed value", string(flipped), owner, b},
		{"truncated", s1[:10], owner, b},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := tt.box.Open(tt.sealed, tt.owner); !errors.Is(err, ErrWrongKey) {
				t.Errorf("Open = %q, %v; want ErrWrongKey", got, err)
			}
		})
	}
	if _, err := b.Open(plain, owner); err == nil {
		t.Error("Open of a clear value succeeded")
	}
}

func TestParseKey(t *testing.T) {
	k := make([]byte, KeySize)
	for i := range k {
		k[i] = byte(i*37 + 250)
	}
	tests := []struct {
		name, text string
		ok         bool
	}{
		{"base64 with newline", base64.StdEncoding.EncodeToString(k) + "\n", true},
		{"base64 unpadded", base64.RawStdEncoding.EncodeToString(k), true},
		{"base64 url", base64.URLEncoding.EncodeToString(k), true},
		{"hex", hex.EncodeToString(k), true},
		{"hex upper case", strings.ToUpper(hex.EncodeToString(k)), true},
		{"too short", base64.StdEncoding.EncodeToString(k[:16]), false},
		{"not a key", "correct horse battery staple", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKey([]byte(tt.text))
			if tt.ok && (err != nil || !bytes.Equal(got, k)) {
				t.Errorf("ParseKey = %x, %v; want %x", got, err, k)
			}
			if !tt.ok && err == nil {
				t.Errorf("ParseKey = %x, want an error", got)
			}
		})
	}
}

func TestCreateKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.key")
	k, err := CreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o600 {
		t.Errorf("key file mode %v, want 0600", m)
	}
	back, err := LoadKeyFile(path)
	if err != nil || !bytes.Equal(back, k) {
		t.Errorf("LoadKeyFile = %x, %v; want %x", back, err, k)
	}
	if _, err := CreateKeyFile(path); !errors.Is(err, os.ErrExist) {
		t.Errorf("CreateKeyFile over an existing file: %v, want os.ErrExist", err)
	}
	if again, _ := LoadKeyFile(path); !bytes.Equal(again, k) {
		t.Error("the existing key file was replaced")
	}
}
