package records_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ledgerbase/ledgerbase/api/records"
	"github.com/ledgerbase/ledgerbase/ent/shortcut"
)

// Every name a switch asks for is one of Names, and every name of Names is
// asked for somewhere: a misspelt switch would be on for good.
func TestEveryShortcutNameIsSwitched(t *testing.T) {
	asked := map[string]bool{}
	for name := range records.Strategies {
		asked[name] = true
	}
	use := regexp.MustCompile(`(?:[uU]ses\(|dataVersionGen\(ctx, |\.Get\(ctx, [\w.]+, )"(\w+)"`)
	err := filepath.WalkDir("../..", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range use.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(shortcut.Names, m[1]) {
				t.Errorf("%s switches %q, which is not in Names", path, m[1])
			}
			asked[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range shortcut.Names {
		if !asked[name] {
			t.Errorf("%s is in Names but nothing switches it", name)
		}
	}
}
