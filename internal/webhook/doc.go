// Package webhook holds the self-contained parts of webhook delivery
// (docs/api.md, Webhooks): signing and verifying deliveries (through the
// standalone webhookverify module, which receivers import), deciding
// which destinations are safe to call, the HTTP client that enforces that
// decision at connect time, sending one delivery attempt, the retry schedule
// and the event body. It knows nothing of the database; the store and the
// scheduler decide what to send and record the Result.
//
// Signing. Service-Timestamp is Unix seconds; Service-Signature is "v1=" +
// lowercase hex HMAC-SHA256 over "{timestamp}.{body}", keyed with the whole
// signing secret string ("whsec_...") as bytes. Every attempt gets a fresh
// timestamp and signature; Service-Delivery stays the same across attempts so
// receivers can drop repeats. Verify accepts several space- or
// comma-separated v1 values in one header, so a sender could sign with an old
// and a new secret during a rotation (this service signs with one).
//
// Every attempt also carries the Standard Webhooks headers, signed with the
// same secret and timestamp (docs/webhooks.md, Standard Webhooks):
// webhook-id is the event id (evt_..., the same on every attempt and
// redelivery, the receivers' key for dropping repeats), webhook-timestamp
// the Service-Timestamp value, and webhook-signature "v1," + base64
// HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}", keyed with the
// base64-decoded part of the secret after "whsec_" (the service's secrets,
// "whsec_" + 40 base62 characters, are valid base64 of 30 bytes).
//
// Limits, stated plainly:
//   - Verification tolerance is 5 minutes in both directions: a timestamp
//     more than 5 minutes in the past or in the future is rejected.
//   - An attempt times out after 10 seconds in total (connect, TLS, headers
//     and body); success is a 2xx within that time.
//   - Redirects are never followed: a 3xx response is a failed attempt.
//   - Proxies from the environment are ignored, so the address checked is the
//     address connected to.
//   - Destinations in these address classes are refused, at endpoint
//     creation (CheckURL, over every address the host resolves to) and again
//     on every connection (NewClient, over the address actually dialled, which
//     defeats DNS rebinding), unless the operator allows private
//     destinations: loopback, private (RFC 1918, fc00::/7), link-local,
//     shared/CGNAT (100.64.0.0/10), multicast, unspecified, "this network"
//     0.0.0.0/8, reserved 240.0.0.0/4 and broadcast, IETF protocol assignments
//     (192.0.0.0/24), benchmarking (198.18.0.0/15, 2001:2::/48),
//     documentation (TEST-NETs, 2001:db8::/32, 3fff::/20), the deprecated
//     6to4 relay anycast (192.88.99.0/24), and every IPv6 address outside
//     global unicast 2000::/3 (which covers ::1, ::, fe80::/10, fec0::/10,
//     ff00::/8, 100::/64 and the IPv4-compatible ::/96) as well as Teredo
//     (2001::/32) and ORCHID (2001:10::/28, 2001:20::/28). IPv4-mapped IPv6
//     (::ffff:a.b.c.d) is unmapped and judged as IPv4; NAT64 64:ff9b::/96 and
//     6to4 2002::/16 are judged by the IPv4 address they embed; local-use
//     NAT64 64:ff9b:1::/48 is refused.
//   - A response body is read up to 4 KiB (and drained up to 64 KiB so the
//     connection can be reused); only a 200-byte sanitised excerpt is kept.
package webhook
