// Command gendata writes storbench's initial TPC-C data to one text file per table
// (COPY text format), so bench/tpcc.sh can time what PostgreSQL's COPY ingests from
// pre-generated files: the practical limit of any loader.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/storbench/storbench/internal/tpcc"
)

func main() {
	dir := flag.String("dir", "", "output directory (created)")
	warehouses := flag.Int("warehouses", 4, "warehouses")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if *dir == "" || *warehouses < 1 {
		fmt.Fprintln(os.Stderr, "gendata: -dir and -warehouses >= 1 are required")
		os.Exit(2)
	}
	if err := generate(*dir, *warehouses, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gendata:", err)
		os.Exit(1)
	}
}

func generate(dir string, warehouses int, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	g := tpcc.NewGenerator(seed, time.Now())
	if err := write(dir, tpcc.ItemTable, g.WriteItems); err != nil {
		return err
	}
	for w := 1; w <= warehouses; w++ {
		wh := g.Warehouse(w)
		for _, t := range tpcc.WarehouseTables {
			if err := write(dir, t, func(out io.Writer) (int64, error) { return wh.Write(t, out) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// write appends a table's rows to DIR/TABLE.tsv.
func write(dir string, t tpcc.Table, gen func(io.Writer) (int64, error)) error {
	f, err := os.OpenFile(filepath.Join(dir, t.String()+".tsv"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := gen(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
