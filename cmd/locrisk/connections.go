package main

// The cap on open connections (docs/operations.md, Limits and defaults).

// defaultMaxConnections is --max-connections' default.
const defaultMaxConnections = 1024

// fdHeadroom is how many file descriptors are kept back from the
// connection cap for the database (its file, WAL and shared memory, per
// connection of the pool), the data files read at start-up, webhook
// deliveries and the listener itself.
const fdHeadroom = 128

// connectionCap is the effective cap: want, lowered to leave fdHeadroom
// descriptors below the open file limit (when known), and at least 1.
// lowered reports whether the limit forced it down.
func connectionCap(want int, fileLimit uint64) (n int, lowered bool) {
	if fileLimit == 0 || fileLimit >= uint64(want)+fdHeadroom {
		return want, false
	}
	if fileLimit <= fdHeadroom+1 {
		return 1, true
	}
	return int(fileLimit - fdHeadroom), true
}
