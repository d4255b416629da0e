package shop

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/paygate-go/paygate"
	"github.com/paygate-go/paygate/gatewaytest"
)

// submit posts the first form of an HTML page, as a browser's auto-submit.
func submit(t *testing.T, c *http.Client, page string) *http.Response {
	t.Helper()
	action := regexp.MustCompile(`<form[^>]*action="([^"]+)"`).FindStringSubmatch(page)
	require.NotNil(t, action, page)
	fields := url.Values{}
	for _, m := range regexp.MustCompile(`name="([^"]+)" value="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	resp, err := c.PostForm(html.UnescapeString(action[1]), fields)
	require.NoError(t, err)
	return resp
}

func read(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return string(b)
}

// The whole purchase through the shop's pages: the order is paid exactly
// once, and its page shows what the shop recorded.
func TestPurchase(t *testing.T) {
	sb := gatewaytest.NewServer(gatewaytest.WithRetryInterval(10 * time.Millisecond))
	defer sb.Close()
	client, err := sb.Client()
	require.NoError(t, err)
	var shopURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	shopURL = srv.URL
	srv.Config.Handler = New(client, sb.Key(), shopURL)
	defer srv.Close()

	browser := &http.Client{}
	resp, err := browser.Get(shopURL + "/")
	require.NoError(t, err)
	require.Contains(t, read(t, resp), "RM 25.90")
	resp, err = browser.PostForm(shopURL+"/buy", nil)
	require.NoError(t, err)
	checkout := read(t, resp)
	require.Contains(t, checkout, `name="signature"`)

	hosted := submit(t, browser, checkout) // follows 303 to the hosted page
	page := read(t, hosted)
	require.Contains(t, page, `id="pay"`)
	payResp, err := browser.PostForm(hosted.Request.URL.String(), url.Values{"choice": {"success"}})
	require.NoError(t, err)
	sb.Settle() // the signed callback has landed
	back := submit(t, browser, read(t, payResp))
	orderPage := read(t, back)
	require.Equal(t, "/orders", back.Request.URL.Path, "the unsigned return leads to the buyer's orders, never to a page chosen by the posted refNo")
	require.Contains(t, orderPage, `<td class="status">paid</td>`)

	resp, err = browser.Get(shopURL + "/orders")
	require.NoError(t, err)
	list := read(t, resp)
	require.Contains(t, list, `<td class="fulfils">1</td>`)
	require.Equal(t, 1, strings.Count(list, "KEDAI-"+"0001</a>"))
	require.Len(t, sb.Callbacks(), 1)
	require.Equal(t, paygate.StatusSuccess, sb.Orders()[0].Status)
}
