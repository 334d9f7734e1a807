package locrisk

// How the domain runs its operations of several steps (a retry, a test
// event, a redelivery, disabling an endpoint) over a store: the store
// opens the transaction (Transactor) and supplies each step's SQL over it
// (TxOps); which steps run, in which order, and which error a request gets
// (in the same words whichever store answers) are decided here. A store's
// method for such an operation is one call.

import (
	"context"
	"fmt"
)

// TxOps is every step a store supplies over an open transaction of an
// operation a Transactor runs (a job's final transition gets its own,
// FinalTxOps).
type TxOps interface {
	RetryTxOps
	WebhookTxOps
	EndpointDisableOps
}

// Transactor runs fn in one transaction of a store, over the store's steps,
// and returns fn's error, or the transaction's when it could not commit.
// fn must use the ctx it is given for the steps: a store may run it apart
// from the caller's cancellation.
type Transactor interface {
	InTx(ctx context.Context, fn func(ctx context.Context, ops TxOps) error) error
}

// inTx runs op in one transaction of db and returns its value; an error,
// op's or the transaction's, is prefixed with what (the operation, as
// every store names it).
func inTx[T any](ctx context.Context, db Transactor, what string, op func(ctx context.Context, ops TxOps) (T, error)) (T, error) {
	var v T
	err := db.InTx(ctx, func(ctx context.Context, ops TxOps) (err error) {
		v, err = op(ctx, ops)
		return err
	})
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}
