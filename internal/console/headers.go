package console

import "net/http"

// contentSecurityPolicy allows the pages only what they use: scripts,
// styles, images and requests of this origin; no inline script, inline
// style attribute or eval (the pages build their DOM with createElement
// and textContent, which Trusted Types then enforce: no HTML string sink
// can be used at all); no plugins, no <base>, no framing. Forms post
// nowhere (their submit is a script's). docs/console.md, Security.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// setSecurityHeaders sets the headers every console answer carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	// The pages' own addresses hold ids, never a key; still, no other
	// site needs to learn them.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}
