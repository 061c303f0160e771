#!/bin/sh
# Symbol names as perf gives them: C++ demangled with parameters (perf
# report -v) for the same perf.data imported, Rust legacy and v0 names
# demangled, --no-demangle keeping the raw names, and samples in PLT stubs
# named func@plt (perf 6.1 still calls them _init: the counts must match).
. "$top_srcdir/tests/t/test-lib.sh"
test_require ROOT PERF_EVENTS PERF DOMPROF CC PYTHON3

# Built without libiberty, names stay mangled (and a note says so).
demangler=yes
grep -q "^#define HAVE_DEMANGLE 1" "$top_builddir/config.h" 2>/dev/null || demangler=

cat >cxx.cpp <<-\EOF
	#include <cstdint>
	#include <cstdlib>
	#include <vector>
	static volatile uint64_t sink;
	namespace ns {
	template <typename T> struct Box {
		__attribute__((noinline)) T spin(T n)
		{
			T x = (T)sink;
			for (T i = 0; i < n; i++) {
				x = x * 6364136223846793005ull + 1;
				__asm__ volatile("" : "+r"(x));
			}
			sink = x;
			return x;
		}
	};
	__attribute__((noinline)) uint64_t work(const std::vector<int> &v, uint64_t n)
	{
		uint64_t x = sink;
		for (uint64_t i = 0; i < n; i++) {
			x = x * 31 + v[i % v.size()];
			__asm__ volatile("" : "+r"(x));
		}
		sink = x;
		return x;
	}
	}
	int main(int argc, char **argv)
	{
		std::vector<int> v{1, 2, 3};
		ns::Box<uint64_t> b;
		long rounds = argc > 1 ? atol(argv[1]) : 300;
		for (long r = 0; r < rounds; r++) {
			b.spin(2000000);
			ns::work(v, 1000000);
		}
		return 0;
	}
EOF
# labs through the PLT in a hot loop (no builtin, lazy binding, a .plt section).
cat >plt.c <<-\EOF
	#include <stdlib.h>
	int main(int argc, char **argv)
	{
		long n = argc > 1 ? atol(argv[1]) : 200000000;
		volatile long s = 0;

		for (long i = 0; i < n; i++)
			s += labs(i - n / 2);
		return (int)(s & 1);
	}
EOF

# perf_vs_domprof PERF.DATA CSV IMAGE-REGEX: every symbol of the image above
# 1 % in `perf report -v` (demangled with parameters) has, under the same
# name, the samples domprof gives it.
perf_vs_domprof() {
	perf report -i "$1" --stdio -v --sort dso,sym -F sample,dso,sym -t '|' \
		>perf.txt 2>perf.err || { cat perf.err; return 1; }
	python3 - perf.txt "$2" "$3" <<-\PY
	import csv, re, sys
	perf, total = {}, 0
	for line in open(sys.argv[1]):
	    if line.startswith("#") or "|" not in line:
	        continue
	    n, dso, sym = (f.strip() for f in line.split("|", 2))
	    total += int(n)
	    m = re.search(r"\[\.\] (.*)$", sym)
	    if m and re.search(sys.argv[3], dso):
	        perf[m.group(1)] = perf.get(m.group(1), 0) + int(n)
	dp = {}
	for r in csv.DictReader(open(sys.argv[2])):
	    if re.search(sys.argv[3], r["image"]):
	        dp[r["symbol"]] = dp.get(r["symbol"], 0) + int(r["samples"])
	bad = 0
	for name, n in sorted(perf.items(), key=lambda x: -x[1]):
	    if n * 100 < total:
	        continue
	    print(f"{name!r}: perf {n}, domprof {dp.get(name)}")
	    bad += dp.get(name) != n
	sys.exit(1 if bad or not perf else 0)
	PY
}

if [ -z "$demangler" ]; then
	test_skip 'C++ and Rust names demangled' 'domprof was built without libiberty-dev'
elif command -v g++ >/dev/null 2>&1 && g++ -O1 -o cxx cxx.cpp; then
	test_expect_success 'C++: perf record, domprof import' '
		perf record -q --no-buildid -e cpu-clock -F 4000 -o c.data -- ./cxx 300 \
			>/dev/null 2>perf.err &&
		domprof import c.data --session-dir c 2>import.err &&
		domprof report --session-dir c --symbols --format csv >c.csv
	'
	test_expect_success 'C++: demangled names and counts are perf report -v'"'"'s' '
		perf_vs_domprof c.data c.csv "/cxx\$" &&
		grep -q "ns::Box<unsigned long>::spin(unsigned long)" c.csv
	'
	test_expect_success 'C++: --no-demangle gives the mangled names' '
		domprof report --session-dir c --symbols --no-demangle --format csv >raw.csv &&
		grep -q ",_ZN2ns3BoxImE4spinEm," raw.csv &&
		! grep -q "ns::Box" raw.csv &&
		[ "$(csv_sum raw.csv "image~/cxx\$")" = "$(csv_sum c.csv "image~/cxx\$")" ]
	'
	test_expect_success 'C++: recorded by domprof, text report demangled too' '
		domprof record --session-dir cr -- ./cxx 100 2>rec.err &&
		domprof report --session-dir cr --symbols >cr.txt &&
		grep -q "ns::work(std::vector<int, std::allocator<int> > const&, unsigned long)" cr.txt
	'
else
	test_skip 'C++ names demangled as perf does' 'no g++'
fi

rustc=$(command -v rustc || { [ -x "$HOME/.cargo/bin/rustc" ] && echo "$HOME/.cargo/bin/rustc"; })
cat >r.rs <<-\EOF
	mod inner {
	    #[inline(never)]
	    pub fn spin_rust(n: u64) -> u64 {
	        let mut x = std::hint::black_box(1u64);
	        for _ in 0..n {
	            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
	        }
	        x
	    }
	}
	fn main() {
	    std::hint::black_box(inner::spin_rust(200_000_000));
	}
EOF
if [ -n "$demangler" ] && [ -n "$rustc" ] && "$rustc" -O -o rl r.rs 2>rustc.err &&
	"$rustc" -O -C symbol-mangling-version=v0 -o rv r.rs 2>>rustc.err; then
	for m in rl rv; do
		test_expect_success "Rust ($m): demangled, raw with --no-demangle" '
			domprof record --session-dir $m.s -- ./$m 2>$m.err &&
			domprof report --session-dir $m.s --symbols --format csv >$m.csv &&
			[ "$(csv_sum $m.csv "image~/$m\$" symbol=r::inner::spin_rust)" -gt 100 ] &&
			domprof report --session-dir $m.s --symbols --no-demangle --format csv >$m.raw &&
			grep -Eq ",(_ZN1r5inner9spin_rust17h[0-9a-f]{16}E|_RNvNtC[^,]*5inner9spin_rust)," \
				$m.raw
		'
	done
else
	test_skip 'Rust legacy and v0 names demangled' 'no rustc'
fi

if cc -O1 -fno-builtin -fplt -Wl,-z,lazy -o plt plt.c &&
	objdump -d plt | grep -q "<labs@plt>:"; then
	test_expect_success 'PLT: perf record, domprof import' '
		perf record -q --no-buildid -e cpu-clock -F 4000 -o p.data -- ./plt 300000000 \
			>/dev/null 2>perf.err &&
		domprof import p.data --session-dir p 2>import.err &&
		domprof report --session-dir p --symbols --format csv >p.csv
	'
	test_expect_success 'PLT: samples in the stub are labs@plt, none _init or [unknown]' '
		python3 "$top_srcdir/tests/helper/csvsum.py" p.csv -g symbol "image~/plt\$" &&
		[ "$(csv_sum p.csv "image~/plt\$" symbol=labs@plt)" -gt 20 ] &&
		[ "$(csv_sum p.csv "image~/plt\$" symbol=_init)" = 0 ] &&
		[ "$(csv_sum p.csv "image~/plt\$" "symbol=[unknown]")" = 0 ]
	'
	test_expect_success 'PLT: as many as perf 6.1 puts in _init (the stub it cannot name)' '
		perf report -i p.data --stdio --sort dso,sym -F sample,dso,sym -t "|" 2>/dev/null |
			awk -F"|" "\$2 ~ /^ *plt *\$/ && \$3 ~ /\\] (_init|labs@plt) *\$/ { n += \$1 } END { print n + 0 }" >perf.n &&
		echo "perf: $(cat perf.n), domprof: $(csv_sum p.csv "image~/plt\$" "symbol~@plt\$")" &&
		[ "$(cat perf.n)" = "$(csv_sum p.csv "image~/plt\$" "symbol~@plt\$")" ]
	'
	test_expect_success 'PLT: domprof record names the stub too' '
		domprof record --session-dir pr -- ./plt 200000000 2>pr.err &&
		domprof report --session-dir pr --symbols >pr.txt &&
		grep -E "/plt +labs@plt$" pr.txt
	'
else
	test_skip 'PLT stubs named func@plt' 'cannot build a lazy-binding PLT program'
fi
test_done
