// Package guides holds the Go code that README.md and the guides in docs/
// show. Every ```go block there is preceded by a comment naming a region of
// a file here, from a "// code: NAME" line to its "// end: NAME" line;
// TestDocsCodeBlocks (docs_code_test.go) holds each block to its region,
// byte for byte, and fails on a Go block with no region; the other tests
// of this package run every region against the gatewaytest sandbox (the
// fleet's on PostgreSQL, when PAYGATE_TEST_POSTGRES_DSN is set).
package guides
