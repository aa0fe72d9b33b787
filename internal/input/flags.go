package input

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// DecimalVar declares a number flag read in base 10 only, for an owner declaring its
// settings' flags. pflag's own IntVar reads a number as Go source does (base 0):
// --users 010 ran 8 users and --warehouses 07777777 asked for 2,097,151, where a user
// writing a count means 10 and 7,777,777.
func DecimalVar[T int | uint64](fs *pflag.FlagSet, p *T, name string, value T, usage string) {
	*p = value
	fs.Var(decimal[T]{p}, name, usage)
}

// decimal is the pflag.Value of DecimalVar.
type decimal[T int | uint64] struct{ p *T }

func (d decimal[T]) Set(s string) error {
	var err error
	switch p := any(d.p).(type) {
	case *int:
		var v int64
		v, err = strconv.ParseInt(s, 10, strconv.IntSize)
		*p = int(v)
	case *uint64:
		*p, err = strconv.ParseUint(s, 10, 64)
	}
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errors.New("out of range")
	case err != nil:
		return errors.New("not a whole number in decimal digits")
	}
	return nil
}

func (d decimal[T]) String() string { return fmt.Sprint(*d.p) }

// Type names the value in --help as pflag's own flags do.
func (d decimal[T]) Type() string {
	if _, ok := any(d.p).(*uint64); ok {
		return "uint"
	}
	return "int"
}
