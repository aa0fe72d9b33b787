package report

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The report is checked the way a person sees it: headless Chromium (Debian's
// "chromium" package, installed by .ci/run) opens the generated file over file://
// with the network blocked, runs its scripts, and gives back the DOM, the console
// and a screenshot.

const (
	// chromiumTimeout bounds one browser run; a run takes about a second here.
	chromiumTimeout = 90 * time.Second
	// chromiumWindow is the viewport, and so the screenshot's size: the screenshot
	// shows the top of the page only, this many pixels of it.
	chromiumWindow = "1280,1600"
	// chromiumVirtualTime is how long (in virtual time, which runs faster than the
	// clock when the page is idle) the page's timers and fetches get before the DOM
	// is dumped and the screenshot taken.
	chromiumVirtualTime = "5000"
)

// chromiumBinary is the first Chromium found in PATH, or "" when there is none.
func chromiumBinary() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromiumArgs is the command line that opens pageURL headless with the network
// blocked, prints the DOM after scripts ran on stdout, logs console messages on
// stderr and, when screenshotPath is not "", writes a PNG there.
func chromiumArgs(userDataDir, pageURL, screenshotPath, window string) []string {
	args := []string{
		"--headless",   // the "new" headless mode: the only one this Chromium has
		"--no-sandbox", // we are root
		"--disable-gpu",
		"--disable-dev-shm-usage", // no crash when /dev/shm is small (containers)
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-extensions",
		"--hide-scrollbars",
		"--user-data-dir=" + userDataDir,
		// No network: every host name and IP literal fails to resolve, and every
		// request, loopback included, goes to a proxy on a closed port.
		"--host-resolver-rules=MAP * ~NOTFOUND",
		"--proxy-server=http://127.0.0.1:9",
		"--proxy-bypass-list=<-loopback>",
		// Console messages and uncaught errors go to stderr as
		//   [pid:tid:MMDD/HHMMSS.micros:INFO:CONSOLE:8] "Uncaught Error: boom", source: file:///x.html (8)
		"--enable-logging=stderr",
		"--v=0",
		"--window-size=" + window,
		"--virtual-time-budget=" + chromiumVirtualTime,
		"--dump-dom",
	}
	if screenshotPath != "" {
		args = append(args, "--screenshot="+screenshotPath)
	}
	return append(args, pageURL)
}

// openInChromium opens htmlPath in headless Chromium with the network blocked and
// returns the DOM after the page's scripts ran and what the browser reported on
// the console: console.log/warn/error messages and uncaught errors (including
// unhandled promise rejections and syntax errors), each as
// `message (source:line)`. Chromium logs every console message of a web page at
// the same level, so a log cannot be told from an error: a page under test should
// print nothing. Failed resource loads (an <img> or <script> whose src cannot be
// fetched) are not reported there.
//
// When screenshotPath is not "", a PNG of the top of the page (chromiumWindow) is
// written there. The test is skipped only when no Chromium is in PATH; any
// failure to run it fails the test. No browser process outlives the call.
func openInChromium(t *testing.T, htmlPath, screenshotPath string) (dom string, console []string) {
	t.Helper()
	return openInChromiumAt(t, htmlPath, screenshotPath, chromiumWindow)
}

// openInChromiumAt is openInChromium with a viewport of window ("width,height").
func openInChromiumAt(t *testing.T, htmlPath, screenshotPath, window string) (dom string, console []string) {
	t.Helper()
	bin := chromiumBinary()
	if bin == "" {
		t.Skip("no Chromium in PATH (looked for chromium, chromium-browser, google-chrome); .ci/run installs Debian's chromium")
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("page to open in Chromium: %v", err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: abs}).String()
	if screenshotPath != "" {
		if screenshotPath, err = filepath.Abs(screenshotPath); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(screenshotPath), 0o755); err != nil {
			t.Fatal(err)
		}
		// A screenshot left by an earlier run must not pass for this one's.
		if err := os.Remove(screenshotPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}

	home := t.TempDir() // a fresh profile, and nothing written to the real home
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, chromiumArgs(filepath.Join(home, "profile"), pageURL, screenshotPath, window)...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
	)
	// The browser and its helpers (zygote, GPU, renderer) share one process group,
	// killed whole on timeout and swept once the browser is gone.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	pgid := cmd.Process.Pid
	err = cmd.Wait()
	elapsed := time.Since(start)
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // stragglers, if any; ESRCH when none
	chromiumSweep(t, home)
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish %s within %v; its group was killed. stderr:\n%s", bin, htmlPath, chromiumTimeout, chromiumTail(stderr.String(), 40))
	}
	if err != nil {
		t.Fatalf("%s on %s: %v. stderr:\n%s", bin, htmlPath, err, chromiumTail(stderr.String(), 40))
	}
	t.Logf("chromium opened %s in %v", filepath.Base(htmlPath), elapsed.Round(time.Millisecond))

	dom = stdout.String()
	if !strings.Contains(dom, "<html") {
		t.Fatalf("%s printed no DOM for %s. stderr:\n%s", bin, htmlPath, chromiumTail(stderr.String(), 40))
	}
	if screenshotPath != "" {
		if _, err := os.Stat(screenshotPath); err != nil {
			t.Fatalf("%s wrote no screenshot: %v. stderr:\n%s", bin, err, chromiumTail(stderr.String(), 40))
		}
	}
	return dom, parseChromiumConsole(stderr.String())
}

// chromiumSweep waits for the processes of the run whose home is home to end,
// and kills those that don't. chrome_crashpad_handler leaves the browser's
// process group (it starts its own session), so the group kill misses it; it
// exits by itself once the browser is gone. All processes of the run, and only
// they, name home on their command line (--user-data-dir, --database).
func chromiumSweep(t *testing.T, home string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := chromiumProcesses(home)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if time.Now().After(deadline.Add(5 * time.Second)) {
				t.Fatalf("chromium processes %v outlived the browser and SIGKILL", pids)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chromiumProcesses lists the live processes whose command line contains s.
func chromiumProcesses(s string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		// A zombie's cmdline is empty, so only live processes match.
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// chromiumLogHeader starts each entry of Chromium's log:
// [pid:tid:MMDD/HHMMSS.micros:LEVEL:where] text
var chromiumLogHeader = regexp.MustCompile(`^\[\d+:\d+:\d{4}/\d{6}\.\d+:[A-Z]+:([^\]]*)\] ?(.*)$`)

// chromiumConsoleWhere is the place of a console entry: CONSOLE:8, or CONSOLE(8)
// in older Chromium.
var chromiumConsoleWhere = regexp.MustCompile(`^CONSOLE(:\d+|\(\d+\))$`)

// chromiumConsoleText is a console entry's text: "message", source: URL (line).
// The message may span lines.
var chromiumConsoleText = regexp.MustCompile(`(?s)^"(.*)", source: (.*) \((\d+)\)$`)

// parseChromiumConsole picks the console entries out of Chromium's stderr.
func parseChromiumConsole(stderr string) []string {
	var out []string
	var cur []string // lines of an unfinished console entry
	flush := func(force bool) {
		if cur == nil {
			return
		}
		text := strings.Join(cur, "\n")
		m := chromiumConsoleText.FindStringSubmatch(text)
		if m == nil && !force {
			return
		}
		if m != nil {
			out = append(out, m[1]+" ("+m[2]+":"+m[3]+")")
		} else {
			out = append(out, text)
		}
		cur = nil
	}
	for _, line := range strings.Split(stderr, "\n") {
		if h := chromiumLogHeader.FindStringSubmatch(line); h != nil {
			flush(true)
			if chromiumConsoleWhere.MatchString(h[1]) {
				cur = []string{h[2]}
				flush(false)
			}
			continue
		}
		if cur != nil { // a multi-line message goes on
			cur = append(cur, line)
			flush(false)
		}
	}
	flush(true)
	return out
}

func chromiumTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// chromiumChartsWithCanvas maps the id of each <div class="chart"> in dom to
// whether a <canvas> follows it before the next chart container.
func chromiumChartsWithCanvas(dom string) map[string]bool {
	const open = `<div class="chart"`
	idAttr := regexp.MustCompile(`^[^>]*\bid="([^"]*)"`)
	charts := map[string]bool{}
	for rest := dom; ; {
		i := strings.Index(rest, open)
		if i < 0 {
			break
		}
		rest = rest[i+len(open):]
		id := "?"
		if m := idAttr.FindStringSubmatch(rest); m != nil {
			id = m[1]
		}
		end := strings.Index(rest, open)
		if end < 0 {
			end = len(rest)
		}
		charts[id] = strings.Contains(rest[:end], "<canvas")
	}
	return charts
}

// chromiumPreText is the text of <pre id="id"> in dom.
func chromiumPreText(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre id="` + regexp.QuoteMeta(id) + `">(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no <pre id=%q> in the DOM", id)
	}
	return m[1]
}

// chromiumScreenshotPath is where a test's screenshot goes: $STORBENCH_ARTIFACTS
// when set, so that it is kept, else the test's temp dir.
func chromiumScreenshotPath(t *testing.T, name string) string {
	if dir := os.Getenv("STORBENCH_ARTIFACTS"); dir != "" {
		return filepath.Join(dir, name)
	}
	return filepath.Join(t.TempDir(), name)
}

// TestChromiumSelfTest proves the harness: ECharts, inlined as the report inlines
// it, draws on canvas; nothing reaches the network; the console is empty; the
// screenshot shows something.
func TestChromiumSelfTest(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join("testdata", "chromium-selftest.html"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join("assets", "echarts.common.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	const placeholder = "/*ECHARTS_JS*/"
	if bytes.Count(tmpl, []byte(placeholder)) != 1 {
		t.Fatalf("testdata/chromium-selftest.html must hold %s exactly once", placeholder)
	}
	if bytes.Contains(bytes.ToLower(js), []byte("</script")) {
		t.Fatal("echarts.common.min.js contains </script and cannot be inlined as is")
	}
	page := filepath.Join(t.TempDir(), "chromium-selftest.html")
	if err := os.WriteFile(page, bytes.Replace(tmpl, []byte(placeholder), js, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := chromiumScreenshotPath(t, "chromium-selftest.png")

	dom, console := openInChromium(t, page, shot)

	charts := chromiumChartsWithCanvas(dom)
	if len(charts) != 2 {
		t.Errorf("want 2 chart containers in the DOM, found %v", charts)
	}
	for id, ok := range charts {
		if !ok {
			t.Errorf("chart %s got no <canvas>", id)
		}
	}
	if len(console) > 0 {
		t.Errorf("console:\n%s", strings.Join(console, "\n"))
	}
	if e := chromiumPreText(t, dom, "script-errors"); e != "" {
		t.Errorf("script errors: %s", e)
	}
	if net := chromiumPreText(t, dom, "net"); !strings.HasPrefix(net, "blocked") {
		t.Errorf("fetch of http://example.com/ was not blocked: %q", net)
	}
	fi, err := os.Stat(shot)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= 5<<10 {
		t.Errorf("screenshot %s is %d bytes; a page with two charts makes more", shot, fi.Size())
	}
	png := []byte("\x89PNG\r\n\x1a\n")
	if b, err := os.ReadFile(shot); err != nil || !bytes.HasPrefix(b, png) {
		t.Errorf("screenshot %s is not a PNG (%v)", shot, err)
	}
}

// TestChromiumSelfTestCatchesErrors proves the harness can fail: an uncaught
// error comes back in console.
func TestChromiumSelfTestCatchesErrors(t *testing.T) {
	page := filepath.Join(t.TempDir(), "boom.html")
	const html = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<pre id="script-errors"></pre>
<script>
window.addEventListener("error", e => { document.getElementById("script-errors").textContent += e.message; });
</script>
<script>throw new Error("boom");</script>
</body></html>
`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := openInChromium(t, page, "")
	found := false
	for _, c := range console {
		if strings.Contains(c, "Uncaught Error: boom") {
			found = true
		}
	}
	if !found {
		t.Errorf("the uncaught error is not in console: %q", console)
	}
	if e := chromiumPreText(t, dom, "script-errors"); !strings.Contains(e, "boom") {
		t.Errorf("the page's error trap did not see the error: %q", e)
	}
}

func TestChromiumConsoleParse(t *testing.T) {
	stderr := `/usr/bin/chromium: 9: [: 25276502016: unexpected operator
[387:412:1122/020519.852842:ERROR:dbus/bus.cc:405] Failed to connect to the bus
[387:387:1122/020520.133123:INFO:CONSOLE:3] "line1
line2", source: file:///tmp/m.html (3)
[387:387:1122/020520.133155:INFO:CONSOLE:6] "Uncaught SyntaxError: Unexpected identifier 'is'", source: file:///tmp/m.html (6)
[387:387:1122/020520.133171:INFO:CONSOLE(4)] "old format", source: file:///tmp/m.html (4)
28751 bytes written to file /tmp/st.png
`
	got := parseChromiumConsole(stderr)
	want := []string{
		"line1\nline2 (file:///tmp/m.html:3)",
		"Uncaught SyntaxError: Unexpected identifier 'is' (file:///tmp/m.html:6)",
		"old format (file:///tmp/m.html:4)",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestChromiumChartsWithCanvas(t *testing.T) {
	dom := `<body><div class="chart" id="a" style="x"><div><canvas data-zr-dom-id="zr_0"></canvas></div></div>` +
		`<div class="chart" id="b" style="x"></div><p>text</p></body>`
	got := chromiumChartsWithCanvas(dom)
	if len(got) != 2 || !got["a"] || got["b"] {
		t.Errorf("got %v, want map[a:true b:false]", got)
	}
}

// TestReportLayoutInChromium opens the report of a two-target study (a user sweep,
// memory and CPU variants, storage profiles, backups and a noisy neighbour) at two
// widths: no table may be wider than its container or run past the page's edge,
// and every chart, every choice of every picker included, must have drawn series
// with something in them (testdata/layout-check.js, run after the page's script).
func TestReportLayoutInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	checkLayoutInChromium(t, build(t, fixtureTwoTargets), 1000, 1400)
}

// checkLayoutInChromium opens r in Chromium at each width and fails the test where
// testdata/layout-check.js finds a table too wide or a chart with nothing drawn.
func checkLayoutInChromium(t *testing.T, r *Report, widths ...int) {
	t.Helper()
	check, err := os.ReadFile(filepath.Join("testdata", "layout-check.js"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	// After the page's own script: the last </body> (the inlined ECharts holds one in a string).
	page := b.String()
	end := strings.LastIndex(page, "</body>")
	html := page[:end] + "<script>" + string(check) + "</script>\n" + page[end:]
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range widths {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			dom, console := openInChromiumAt(t, path, "", strconv.Itoa(width)+",1000")
			if len(console) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
			}
			lines := strings.Split(chromiumPreText(t, dom, "layout-check"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "checked ") || strings.HasPrefix(last, "checked 0 tables") || strings.HasSuffix(last, " 0 charts") {
				t.Fatalf("the layout check did not run over the report; it says: %.300q", last)
			}
			t.Log(last)
			for _, p := range lines[:len(lines)-1] {
				t.Error(p)
			}
		})
	}
}

// fixtureTwoTargets is a real two-target study's results store, made by
// bench/reportshot.sh (kept with its second argument): two managed PostgreSQL
// targets, one limited to one CPU and 256MB, 1 warehouse, a user sweep, memory and
// CPU variants, storage profiles, backups and a noisy neighbour.
const fixtureTwoTargets = "testdata/twotargets"
