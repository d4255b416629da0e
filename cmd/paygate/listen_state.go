package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/paygate-go/paygate"
)

// orderID names one order of the report: the reference it was created
// with (refNo~extraData) and the gateway's order number, so that two
// orders under one reference are two orders.
type orderID struct {
	ref, orderNo string
}

// listenState is what paygate listen has forwarded: per order, the last
// status its handler took (answered 2xx). Kept in -state FILE, it spans
// restarts: a change made while listen was stopped is forwarded when it
// starts again, and nothing forwarded is sent twice.
type listenState struct {
	forwarded map[orderID]paygate.Status
}

// stateFile is the -state file's form: one entry per order, sorted.
type stateFile struct {
	Forwarded []stateEntry `json:"forwarded"`
}

// stateEntry is one order's last forwarded status.
type stateEntry struct {
	RefNo   string         `json:"refNo"`
	OrderNo string         `json:"orderNo"`
	Status  paygate.Status `json:"status"`
}

// newListenState is an empty state.
func newListenState() *listenState {
	return &listenState{forwarded: map[orderID]paygate.Status{}}
}

// loadState reads the state at path; found is false (and the state
// empty) when there is no file yet.
func loadState(path string) (st *listenState, found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newListenState(), false, probeWritable(path)
	}
	if err != nil {
		return nil, false, err
	}
	st, err = decodeState(b)
	if err != nil {
		return nil, false, fmt.Errorf("-state %s: not a state file paygate listen wrote (%w); move it away to start afresh", path, err)
	}
	return st, true, nil
}

// probeWritable checks that a file can be made beside path, so that a
// state that cannot be saved is refused before anything is forwarded.
func probeWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("-state %s: cannot be written: %w", path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// decodeState reads a state file's bytes: every entry has a reference and
// one of the three statuses, and no order is listed twice.
func decodeState(b []byte) (*listenState, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f stateFile
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the state")
	}
	st := newListenState()
	for i, e := range f.Forwarded {
		id := orderID{ref: e.RefNo, orderNo: e.OrderNo}
		switch _, dup := st.forwarded[id]; {
		case e.RefNo == "":
			return nil, fmt.Errorf("entry %d: no refNo", i)
		case !e.Status.Valid():
			return nil, fmt.Errorf("entry %d: status %q is not success, pending or failed", i, e.Status)
		case dup:
			return nil, fmt.Errorf("entry %d: order %s %s listed twice", i, e.RefNo, e.OrderNo)
		}
		st.forwarded[id] = e.Status
	}
	return st, nil
}

// encode is the state as a file's bytes, entries sorted.
func (st *listenState) encode() []byte {
	f := stateFile{Forwarded: make([]stateEntry, 0, len(st.forwarded))}
	for id, s := range st.forwarded {
		f.Forwarded = append(f.Forwarded, stateEntry{RefNo: id.ref, OrderNo: id.orderNo, Status: s})
	}
	slices.SortFunc(f.Forwarded, func(a, b stateEntry) int {
		return cmp.Or(cmp.Compare(a.RefNo, b.RefNo), cmp.Compare(a.OrderNo, b.OrderNo))
	})
	b, _ := json.MarshalIndent(f, "", "  ") // strings only: cannot fail
	return append(b, '\n')
}

// save writes the state to path whole or not at all: a temporary file in
// the same directory, synced, then renamed over path.
func (st *listenState) save(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	_, err = tmp.Write(st.encode())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
