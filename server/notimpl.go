package server

// errNotImplemented answers operations whose feature has not landed yet,
// after authentication, rate limiting and the scope check have run, so the
// auth table of every operation is already the final one.
func errNotImplemented(op string) error {
	return errorf(codeNotImplemented, "%s is not implemented yet", op)
}
