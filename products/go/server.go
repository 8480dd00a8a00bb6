// Go's net/http as muxlab's peer for `green`: the product a goroutine per connection stands
// for, serving muxlab's work the way a Go program would. Standard library only; bench builds it
// with Debian's golang-go (`go build`) and starts it like nginx.
//
// Each request answers 200 with muxlab's body ("<html>hello</html>", text/html) after its work:
//
//   - `-work SPEC` (as `muxlab serve --work`): `cpu:D`, `sleep:D` or `cpu:D+sleep:D`, where D is a
//     fixed time (`200us`) or `exp(MEAN)`; a request's draws are cut at 10 s, CPU and call
//     together. With `-from-request` (as `--work-from-request`), a request's query names its own
//     (`/?cpu=20us&sleep=exp(1ms)`): one whose mean is over `-max-work` (muxlab's `--max-work`,
//     10ms by default) is refused with 400, and its draws are cut there; a query that names
//     none gets `-work`.
//   - `cpu:D` spins D of the goroutine's own CPU time: the goroutine is locked to its thread for
//     the spin and reads the thread's clock (CLOCK_THREAD_CPUTIME_ID), as muxlab's workers do.
//     Go's asynchronous preemption still takes its P every 10 ms, as it would any busy goroutine.
//   - `sleep:D` is a blocking call: `-sleep nanosleep` (the default) makes the nanosleep system
//     call, the path a cgo or file call takes: the goroutine holds its thread for the whole call,
//     and its P moves to another thread only when the runtime's sysmon takes it (at a check,
//     every 20 us backing off to 10 ms while it finds nothing to do, once the P has goroutines
//     waiting or no other P is idle, or the call has lasted 10 ms); `-sleep time` is
//     `time.Sleep`, which parks the goroutine on the runtime's timers and holds no thread (the
//     path a network wait takes).
//   - Draws come from math/rand seeded by `-seed` (one generator under a lock).
//
// GOMAXPROCS (the Ps, green's `--workers`) comes from the environment, as Go reads it. SIGTERM
// ends it with status 0. It prints nothing while it serves; bench knows it is up when it
// accepts a connection.
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// ceiling is the most one request's `-work` may cost (muxlab's `work::CEILING`).
const ceiling = 10 * time.Second

var body = []byte("<html>hello</html>")

// dist is a service-time distribution: fixed, or exponential with mean `mean`.
type dist struct {
	mean time.Duration
	exp  bool
}

// work is what a request costs: CPU, then a blocking call; either may be absent.
type work struct {
	cpu, sleep *dist
}

var (
	rngMu sync.Mutex
	rng   *rand.Rand
)

func (d *dist) draw() time.Duration {
	if d == nil {
		return 0
	}
	if !d.exp {
		return d.mean
	}
	rngMu.Lock()
	e := rng.ExpFloat64()
	rngMu.Unlock()
	return time.Duration(e * float64(d.mean))
}

func (d *dist) meanOf() time.Duration {
	if d == nil {
		return 0
	}
	return d.mean
}

// draw is one request's CPU and call, together cut at `limit` (the call cut first).
func (w work) draw(limit time.Duration) (time.Duration, time.Duration) {
	cpu, call := w.cpu.draw(), w.sleep.draw()
	if cpu > limit {
		cpu = limit
	}
	if cpu+call > limit {
		call = limit - cpu
	}
	return cpu, call
}

// parseDuration reads muxlab's durations: a number and ns, us, µs, ms, s (or none), m or h.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i < 0 {
		i = len(s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("'%s' is not a duration: write e.g. 200us, 5ms, 1.5s", s)
	}
	unit := map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "": 1e9, "s": 1e9, "m": 60e9, "h": 3600e9}
	f, ok := unit[s[i:]]
	if !ok {
		return 0, fmt.Errorf("'%s' has an unknown unit '%s': use ns, us, ms, s, m or h", s, s[i:])
	}
	return time.Duration(v * f), nil
}

// parseDist reads D: a fixed time or exp(MEAN); other distributions are refused.
func parseDist(s string) (*dist, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "exp(") && strings.HasSuffix(s, ")") {
		m, err := parseDuration(s[4 : len(s)-1])
		if err != nil {
			return nil, err
		}
		if m <= 0 {
			return nil, fmt.Errorf("'%s': a mean must be more than zero", s)
		}
		return &dist{mean: m, exp: true}, nil
	}
	if strings.Contains(s, "(") {
		return nil, fmt.Errorf("'%s': this server draws fixed times and exp(MEAN) only", s)
	}
	d, err := parseDuration(s)
	if err != nil {
		return nil, err
	}
	return &dist{mean: d}, nil
}

// parseWork reads `none`, `cpu:D`, `sleep:D` or `cpu:D+sleep:D`.
func parseWork(s string) (work, error) {
	var w work
	if s == "" || s == "none" {
		return w, nil
	}
	for _, part := range strings.Split(s, "+") {
		kind, d, ok := strings.Cut(part, ":")
		if !ok {
			return w, fmt.Errorf("'%s': write cpu:D, sleep:D or cpu:D+sleep:D", part)
		}
		v, err := parseDist(d)
		if err != nil {
			return w, err
		}
		switch kind {
		case "cpu":
			w.cpu = v
		case "sleep":
			w.sleep = v
		default:
			return w, fmt.Errorf("'%s': the work is cpu: or sleep:", part)
		}
	}
	return w, nil
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// spin uses d of the goroutine's CPU time, on the thread it is locked to meanwhile.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	until := threadCPU() + d
	for threadCPU() < until {
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	spec := flag.String("work", "none", "every request's work: cpu:D, sleep:D or cpu:D+sleep:D (D: a time or exp(MEAN))")
	fromRequest := flag.Bool("from-request", false, "a request's query names its work (/?cpu=20us&sleep=exp(1ms))")
	sleepHow := flag.String("sleep", "nanosleep", "how sleep: blocks: nanosleep (a blocking system call) or time (time.Sleep)")
	seed := flag.Int64("seed", 1, "seed of the work's draws")
	maxWork := flag.String("max-work", "10ms", "with -from-request: the most a request's named work may cost on average (400 past it); its draws are cut there")
	flag.Parse()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "go-http:", err)
		os.Exit(2)
	}
	every, err := parseWork(*spec)
	if err != nil {
		fail(err)
	}
	limit, err := parseDuration(*maxWork)
	if err != nil || limit <= 0 {
		fail(fmt.Errorf("-max-work %s: a duration over zero", *maxWork))
	}
	var sleep func(time.Duration)
	switch *sleepHow {
	case "nanosleep":
		sleep = func(d time.Duration) {
			ts := syscall.NsecToTimespec(int64(d))
			for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
			}
		}
	case "time":
		sleep = time.Sleep
	default:
		fail(fmt.Errorf("-sleep %s: nanosleep or time", *sleepHow))
	}
	rng = rand.New(rand.NewSource(*seed))

	handler := func(w http.ResponseWriter, r *http.Request) {
		wk, cut := every, ceiling
		if *fromRequest {
			q := r.URL.Query()
			spec := []string{}
			for _, k := range []string{"cpu", "sleep"} {
				if v := q.Get(k); v != "" {
					spec = append(spec, k+":"+v)
				}
			}
			if len(spec) > 0 {
				named, err := parseWork(strings.Join(spec, "+"))
				if err == nil && named.cpu.meanOf()+named.sleep.meanOf() > limit {
					err = fmt.Errorf("'%s' costs more than -max-work %v on average", strings.Join(spec, "+"), limit)
				}
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				wk, cut = named, limit
			}
		}
		cpu, call := wk.draw(cut)
		spin(cpu)
		if call > 0 {
			sleep(call)
		}
		h := w.Header()
		h.Set("Content-Type", "text/html")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fail(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		os.Exit(0)
	}()
	srv := &http.Server{Handler: http.HandlerFunc(handler), IdleTimeout: 0}
	fail(srv.Serve(l))
}
