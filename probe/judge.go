package probe

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// judgeMissingLookup judges the answer to a lookup of a reference nobody
// created (docs/assumptions.md A-lookup): the SDK reads a 404, or a 200
// with status OK whose fpxrequest is absent, null or empty, as "not
// found". It says
// whether the answer reads so, and how it read it.
func judgeMissingLookup(status int, body []byte) (notFound bool, saw string) {
	if status == http.StatusNotFound {
		return true, "404, read as not found"
	}
	if status != http.StatusOK {
		return false, "neither 404 nor 200"
	}
	var answer struct {
		Status     string          `json:"status"`
		FPXRequest json.RawMessage `json:"fpxrequest"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return false, "200 whose body is not a JSON object"
	}
	if answer.Status != "OK" {
		return false, "200 whose status is not OK"
	}
	switch r := bytes.TrimSpace(answer.FPXRequest); {
	case len(r) == 0:
		return true, "200 without fpxrequest, read as not found"
	case string(r) == "null", string(r) == "{}", string(r) == "[]":
		return true, "200 with an empty fpxrequest, read as not found"
	}
	return false, "200 with a record for a reference nobody created"
}
