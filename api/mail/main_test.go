package mail_test

import (
	"testing"

	"github.com/ledgerbase/ledgerbase/api/apitest"
)

func TestMain(m *testing.M) { apitest.Main(m) }
