package study

import (
	"testing"

	"github.com/storbench/storbench/internal/testsupport/testhome"
)

func TestMain(m *testing.M) { testhome.Main(m) }
