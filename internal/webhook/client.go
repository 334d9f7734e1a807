package webhook

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Timeout bounds one delivery attempt from dial to the last body byte read.
const Timeout = 10 * time.Second

// NewClient returns the HTTP client deliveries go through. Unless
// allowPrivate, its dialer inspects the address each connection is actually
// about to use (after DNS, per address the dialer tries) and refuses a
// disallowed one with an *AddressError: a host that resolved to a public
// address at endpoint creation and now resolves to 127.0.0.1 is refused here.
// Redirects are not followed (the 3xx response is returned as is), proxies
// from the environment are ignored, and every request is limited to Timeout.
//
// One client should be shared by all deliveries so connections are reused.
func NewClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
	}
	if !allowPrivate {
		dialer.Control = refuseDisallowed
	}
	transport := &http.Transport{
		// No proxy: through a proxy the dialled address would be the
		// proxy's, and the check would say nothing about the destination.
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  Timeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    2,
		MaxConnsPerHost:        8,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// refuseDisallowed is a net.Dialer Control function: it runs after the
// socket is created and before connect, with the literal ip:port being
// connected to. An address that does not parse is refused: failing closed is
// the point.
func refuseDisallowed(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse dial address %q", ErrAddressNotAllowed, address)
	}
	if c := AddressClass(ap.Addr()); c != "" {
		return &AddressError{Addr: ap.Addr(), Class: c}
	}
	return nil
}
