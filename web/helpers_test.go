package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func cookies(name, value string) []*http.Cookie {
	return []*http.Cookie{{Name: name, Value: value, Path: "/admin"}}
}

func mustRequest(t *testing.T, u string, form url.Values) *http.Request {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func itoa(n int) string { return strconv.Itoa(n) }
