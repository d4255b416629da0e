// The 500 MB figures read each child's peak RSS from its rusage, which
// only unix systems report.

//go:build unix

package zakat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
)

// validateModeVar makes TestValidateFileHelper, in a child process, validate
// the file it names the way validateModeVar's value says.
const validateModeVar = "PAYGATE_VALIDATE_MODE"

// TestValidateFileHelper is the child process of BenchmarkValidate500MB:
// "whole" reads the file and calls ValidateBatchJSON (what `paygate webhook
// validate` did before it streamed), "stream" calls ValidateBatchReader on
// the open file with the collector tuned as `paygate webhook validate`
// tunes it. Without the variable it does nothing.
func TestValidateFileHelper(t *testing.T) {
	mode, name := os.Getenv(validateModeVar), os.Getenv("PAYGATE_VALIDATE_FILE")
	var err error
	switch mode {
	case "":
		return
	case "whole":
		var body []byte
		if body, err = os.ReadFile(name); err == nil {
			_, err = Validator{}.ValidateBatchJSON(body)
		}
	case "stream":
		debug.SetGCPercent(10) // as `paygate webhook validate` does
		var f *os.File
		if f, err = os.Open(name); err == nil {
			_, err = Validator{}.ValidateBatchReader(f)
			f.Close()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// writeBigBatch writes a valid batch of about size bytes: the fully
// populated transactions of the validation benchmarks, each with its own
// orderno.
func writeBigBatch(tb testing.TB, path string, size int) int {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"$schema":"https://webhook.example/schema.json","transactions":[`)
	n := 0
	for written := 0; written < size; n++ {
		tx := validTx(n)
		tx.OrderNo = fmt.Sprintf("ZKT-%010d", n)
		raw, err := json.Marshal(tx)
		if err != nil {
			tb.Fatal(err)
		}
		if n > 0 {
			w.WriteByte(',')
		}
		w.Write(raw)
		written += len(raw) + 1
	}
	w.WriteString("]}\n")
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkValidate500MB validates a 500 MB batch file in child processes,
// the whole-file way and streaming, in turn, and reports each one's peak RSS
// and the time ratio stream/whole.
//
//	go test -run '^$' -bench Validate500MB -benchtime 3x .
func BenchmarkValidate500MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "batch.json")
	n := writeBigBatch(b, path, 500<<20)
	st, _ := os.Stat(path)
	b.Logf("%d transactions, %d bytes", n, st.Size())
	run := func(mode string) (time.Duration, int64) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestValidateFileHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), validateModeVar+"="+mode, "PAYGATE_VALIDATE_FILE="+path)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v\n%s", mode, err, out.String())
		}
		return time.Since(start), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
	}
	var whole, stream time.Duration
	var wholeRSS, streamRSS int64
	for i := 0; i < b.N; i++ {
		d, rss := run("whole")
		whole += d
		wholeRSS = max(wholeRSS, rss)
		d, rss = run("stream")
		stream += d
		streamRSS = max(streamRSS, rss)
	}
	b.ReportMetric(float64(wholeRSS)/1024, "MB-RSS-whole")
	b.ReportMetric(float64(streamRSS)/1024, "MB-RSS-stream")
	b.ReportMetric(stream.Seconds()/whole.Seconds(), "x-time-stream/whole")
	b.ReportMetric(stream.Seconds()/float64(b.N), "s-stream")
	b.ReportMetric(whole.Seconds()/float64(b.N), "s-whole")
}

// largeInputsVar names the directory TestWriteLargeInputsHelper writes the
// inputs of BENCHMARKS.md's bounded-memory figures to.
const largeInputsVar = "PAYGATE_WRITE_INPUTS"

// TestWriteLargeInputsHelper writes the three files of the bounded-memory
// figures of BENCHMARKS.md into the directory $PAYGATE_WRITE_INPUTS:
// onestring.json (a batch whose one transaction is a 300 MB string),
// nested.json (a batch with 300 MB of nested arrays) and batch500.json (a
// valid batch of 500 MB), ones.json (300 MB of transactions that are not
// objects) and ordernos.json (300 MB of distinct ordernos). Without the
// variable it does nothing.
//
//	PAYGATE_WRITE_INPUTS=/tmp go test -run '^TestWriteLargeInputsHelper$' -count=1 .
func TestWriteLargeInputsHelper(t *testing.T) {
	dir := os.Getenv(largeInputsVar)
	if dir == "" {
		return
	}
	const size = 300_000_000
	repeat := func(name, head string, c byte, tail string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(f, 1<<20)
		w.WriteString(head)
		w.Write(bytes.Repeat([]byte{c}, size))
		w.WriteString(tail)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	repeat("onestring.json", `{"transactions":["`, 'a', `"]}`)
	repeat("nested.json", `{"transactions":[],"x":`, '[', "")
	writeBigBatch(t, filepath.Join(dir, "batch500.json"), 500<<20)
	// Two more that the caps on problems and ordernos bound: 150 million
	// transactions that are not objects, and 14 million distinct ordernos.
	f, err := os.Create(filepath.Join(dir, "ones.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"transactions":[`)
	w.Write(bytes.Repeat([]byte("1,"), size/2))
	w.WriteString("1]}")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = os.Create(filepath.Join(dir, "ordernos.json")); err != nil {
		t.Fatal(err)
	}
	w = bufio.NewWriterSize(f, 1<<20)
	w.WriteString(`{"transactions":[`)
	for i, n := 0, 0; n < size; i++ {
		k, _ := fmt.Fprintf(w, `{"orderno":"%x"},`, i)
		n += k
	}
	w.WriteString(`{"orderno":"end"}]}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}
