package study

import (
	"testing"

	"github.com/storbench/storbench/internal/testhome"
)

func TestMain(m *testing.M) { testhome.Main(m) }
