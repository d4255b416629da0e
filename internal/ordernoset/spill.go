package ordernoset

import (
	"io"
	"os"
)

// TempFile returns a Config.Spill that makes a temporary file in dir (the
// system's when dir is ""), removed by Close.
func TempFile(dir string) func() (Spill, error) {
	return func() (Spill, error) {
		f, err := os.CreateTemp(dir, "paygate-ordernos-*")
		if err != nil {
			return nil, err
		}
		return tempFile{f}, nil
	}
}

// tempFile is a temporary file that Close removes.
type tempFile struct{ *os.File }

// Close closes and removes the file.
func (f tempFile) Close() error {
	err := f.File.Close()
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}

// Memory returns a Config.Spill that keeps the runs in memory, for an
// input already in memory: the Set answers as it does with a file.
func Memory() func() (Spill, error) {
	return func() (Spill, error) { return &memory{}, nil }
}

// memory is a Spill in a byte slice.
type memory struct{ b []byte }

func (m *memory) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memory) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memory) Close() error {
	m.b = nil
	return nil
}
