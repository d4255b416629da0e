package paygate

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/paygate-go/paygate/internal/paths"
	"github.com/paygate-go/paygate/internal/scrub"
)

// serviceURL parses a service base URL: absolute, https (or http to a
// loopback host, for a local sandbox: docs/assumptions.md A-http-loopback),
// no query (not even an empty one) or fragment.
func serviceURL(opt, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return nil, fmt.Errorf("paygate: %s %q: want an absolute http(s) URL", opt, scrub.URL(raw))
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return nil, fmt.Errorf("paygate: %s %q: plain http is allowed only to a loopback host", opt, scrub.URL(raw))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil:
		// An empty query too: the endpoint paths would follow its '?'.
		return nil, fmt.Errorf("paygate: %s %q: no query, fragment or user information", opt, scrub.URL(raw))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// webhookEndpoint is NewWebhookSender's rule for the URL: the endpoint it
// posts to, or an error that does not repeat the URL's secrets. Plain http
// is refused but to a loopback host (docs/assumptions.md A-http-loopback).
func webhookEndpoint(webhookURL string) (string, error) {
	return webhookEndpointAt(webhookURL, paths.Webhook)
}

// webhookEndpointAt is webhookEndpoint with bare as a bare host's path.
func webhookEndpointAt(webhookURL, bare string) (string, error) {
	u, err := url.Parse(webhookURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("paygate: webhook URL %q: want an absolute http(s) URL", scrub.URL(webhookURL))
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("paygate: webhook URL %q: plain http is allowed only to a loopback host; the password would travel in clear", scrub.URL(webhookURL))
	}
	if u.User != nil {
		return "", fmt.Errorf("paygate: webhook URL %q: no user information (the password goes in X-API-Password)", scrub.URL(webhookURL))
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("paygate: webhook URL %q: want no query or fragment (the endpoint's URL, or a bare host)", scrub.URL(webhookURL))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path, u.RawPath = bare, ""
	}
	return u.String(), nil
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
