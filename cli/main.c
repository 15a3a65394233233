/* cli/main.c — the `vsched` command line (interfaces.md): a thin layer
 * over include/vsched.h. Exit status: 0 success, 1 a rewrite was rejected
 * or a check failed, 2 the input cannot be used. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vsched.h"

static const char usage[] =
	"usage:\n"
	"  vsched run KERNEL.tir [--schedule S.sched] [--float real|ieee] [--log DIR]\n"
	"             [-o OUT.tir] [--timeout-ms N] [--json] [--cache DIR]\n"
	"  vsched interp KERNEL.tir [--func F] [--seed N]\n"
	"  vsched equiv A.tir B.tir [--func F] [--trials N] [--seed N]\n"
	"  vsched build KERNEL.tir [--schedule S.sched] --emit llvm|asm|obj|header -o OUT\n"
	"             [--fma] [--cpu NAME] [--cpu-features LIST] [--cache DIR]\n"
	"  vsched jit KERNEL.tir [--schedule S.sched] [--func F] [--trials N] [--seed N]\n"
	"             [--repeat N] [--log DIR] [--fma] [--cpu NAME] [--cpu-features LIST]\n"
	"             [--cache DIR]\n"
	"  vsched log show DIR [--json]\n"
	"  vsched log check DIR [--solver z3|cvc5] [--rebuild | --json]\n"
	"  vsched --version\n"
	"  vsched help COMMAND   (or vsched COMMAND --help): a command's options\n"
	"  vsched help primitives: the schedule primitives, their arguments and proofs\n"
	"--cache DIR (or the environment variable VSCHED_CACHE): a persistent proof\n"
	"cache shared by runs and processes; a warm cache solves nothing twice.\n";

typedef struct Opts {
	const char *pos[3];
	int npos;
	const char *schedule, *floatmode, *log, *out, *func, *solver, *emit, *cache;
	const char *cpu, *cpu_features; /* build, jit: the target CPU */
	unsigned timeout_ms;
	unsigned long seed;
	int trials;
	int json;
	int fma;    /* build, jit: fuse x * y + z in real mode */
	int repeat; /* vsched jit: timed runs */
	int rebuild; /* log check: re-run the logged schedule first */
	unsigned cmd; /* the command's bit (C_RUN ...), 0 if unknown */
} Opts;

static int die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "vsched: %s%s%s\n%s", msg, arg ? ": " : "", arg ? arg : "", usage);
	return 2;
}

/* A decimal number without a sign (strtoul alone would take "-5" as a
 * huge number). */
static int parse_number(const char *s, unsigned long *out)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return *end == 0 && errno == 0;
}

/* The library's last error on stderr: diagnostics come rendered
 * ("file:line:col: error: ..."); a plain message gets "vsched: error: ";
 * either ends with a newline. */
/* ---------- colour on stderr ----------
 * Only on a terminal, and never when NO_COLOR is set (no-color.org);
 * VSCHED_COLOR=always or never overrides both (for tests and pipes). */
static int color_state = -1;

static bool color_on(void)
{
	if (color_state < 0) {
		const char *force = getenv("VSCHED_COLOR");
		const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
		if (force && strcmp(force, "always") == 0)
			color_state = 1;
		else if (force && strcmp(force, "never") == 0)
			color_state = 0;
		else
			color_state = isatty(2) && !(no && *no) && !(term && strcmp(term, "dumb") == 0);
	}
	return color_state == 1;
}

/* Words that get a colour where they stand as a report's or a
 * diagnostic's keyword. */
static const struct {
	const char *word, *sgr;
} colored[] = {
	{"error:", "1;31"},   {"warning:", "1;35"}, {"REJECTED", "1;31"}, {"refuted", "31"},
	{"not proven", "33"}, {"committed", "32"},  {"proven", "32"},     {"hint:", "36"},
	{"violation:", "1;31"},
};

/* text on stderr, with the keywords coloured when colour is on */
static void err_puts(const char *text)
{
	if (!color_on()) {
		fputs(text, stderr);
		return;
	}
	for (const char *p = text; *p;) {
		bool hit = false;
		/* a keyword starts a word */
		if (p == text || p[-1] == ' ' || p[-1] == '\n')
			for (size_t i = 0; i < sizeof colored / sizeof *colored && !hit; i++) {
				size_t n = strlen(colored[i].word);
				if (strncmp(p, colored[i].word, n) == 0) {
					fprintf(stderr, "\033[%sm%s\033[0m", colored[i].sgr, colored[i].word);
					p += n;
					hit = true;
				}
			}
		if (!hit)
			fputc(*p++, stderr);
	}
}

/* ---------- progress on stderr ----------
 * A script step that runs longer than a second (VSCHED_PROGRESS_AFTER_MS
 * overrides, for tests) gets one status line on stderr, rewritten in place
 * every 250 ms and cleared when the step ends; only on a terminal. */
typedef struct Progress {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool running, stop, shown;
	int line;
	char step[160];
	struct timespec start;
	long after_ms;
} Progress;

static double since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) * 1e-9;
}

static void progress_step(void *ud, int line, const char *step, int done)
{
	Progress *p = ud;
	pthread_mutex_lock(&p->mu);
	if (done) {
		if (p->shown)
			fputs("\r\033[K", stderr);
		p->running = p->shown = false;
	} else {
		p->running = true;
		p->line = line;
		snprintf(p->step, sizeof p->step, "%s", step ? step : "");
		clock_gettime(CLOCK_MONOTONIC, &p->start);
		if (p->after_ms == 0) { /* show it at once, from this thread */
			fprintf(stderr, "\r\033[Kvsched: line %d: %.60s ... 0 s", p->line, p->step);
			fflush(stderr);
			p->shown = true;
		}
	}
	pthread_mutex_unlock(&p->mu);
}

static void *progress_main(void *ud)
{
	Progress *p = ud;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		struct timespec wake;
		clock_gettime(CLOCK_REALTIME, &wake);
		wake.tv_nsec += 250 * 1000000L;
		if (wake.tv_nsec >= 1000000000L)
			wake.tv_sec++, wake.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&p->cv, &p->mu, &wake);
		if (p->stop || !p->running)
			continue;
		double t = since(&p->start);
		if (t * 1000.0 < (double)p->after_ms)
			continue;
		fprintf(stderr, "\r\033[Kvsched: line %d: %.60s ... %.0f s", p->line, p->step, t);
		fflush(stderr);
		p->shown = true;
	}
	if (p->shown)
		fputs("\r\033[K", stderr);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Start the status line's thread when stderr is a terminal; false when
 * there is none to show. */
static bool progress_start(Progress *p, vs_options *opt)
{
	memset(p, 0, sizeof *p);
	if (!isatty(2))
		return false;
	const char *env = getenv("VSCHED_PROGRESS_AFTER_MS");
	p->after_ms = env && *env ? atol(env) : 1000;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, progress_main, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		return false;
	}
	opt->progress = progress_step;
	opt->progress_ud = p;
	return true;
}

static void progress_stop(Progress *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
}

static Progress progress;
static bool progress_on;

static void print_error(vs_context *ctx)
{
	const char *e = vs_last_error(ctx);
	if (!e || !*e)
		return;
	if (strncmp(e, "error:", 6) != 0 && !strstr(e, ": error:"))
		err_puts("vsched: error: ");
	err_puts(e);
	if (e[strlen(e) - 1] != '\n')
		fputc('\n', stderr);
}

/* ---------- commands and their options ---------- */

enum {
	C_RUN = 1, C_INTERP = 2, C_EQUIV = 4, C_BUILD = 8, C_JIT = 16, C_LOG_SHOW = 32,
	C_LOG_CHECK = 64,
	C_SCHED = C_RUN | C_BUILD | C_JIT, /* the commands that run a schedule */
};

typedef struct Command {
	const char *name; /* "log show" for the log subcommands */
	unsigned bit;
	const char *args, *summary;
} Command;

static const Command commands[] = {
	{"run", C_RUN, "KERNEL.tir",
	 "apply the schedule step by step, every step proven; print the resulting IR (or\n"
	 "write it to OUT); on a rejection print the counterexample report and exit 1"},
	{"interp", C_INTERP, "KERNEL.tir",
	 "run the reference interpreter on generated admissible inputs; print inputs and outputs"},
	{"equiv", C_EQUIV, "A.tir B.tir",
	 "run both kernels on the same admissible inputs; exit 0 when all agree"},
	{"build", C_BUILD, "KERNEL.tir",
	 "schedule, prove the result free of out-of-bounds accesses and division by zero\n"
	 "(warnings), and compile it through LLVM"},
	{"jit", C_JIT, "KERNEL.tir",
	 "schedule, compile in memory, check against the interpreter and time the result\n"
	 "against the kernel as written"},
	{"log show", C_LOG_SHOW, "DIR", "summarise a proof log: rewrites, obligations, verdicts, times"},
	{"log check", C_LOG_CHECK, "DIR",
	 "re-run every logged query with an independent solver (z3 or cvc5 binary)"},
};

enum { OPT_SCHEDULE, OPT_FLOAT, OPT_LOG, OPT_OUT, OPT_FUNC, OPT_SOLVER, OPT_EMIT, OPT_CACHE,
       OPT_JSON, OPT_FMA, OPT_CPU, OPT_CPU_FEATURES, OPT_REPEAT, OPT_TIMEOUT, OPT_TRIALS, OPT_SEED, OPT_REBUILD };

typedef struct Option {
	const char *name, *value; /* value: its placeholder, NULL for a flag */
	unsigned cmds;
	const char *help;
} Option;

static const Option options[] = {
	[OPT_SCHEDULE] = {"--schedule", "S.sched", C_SCHED, "the schedule script"},
	[OPT_FLOAT] = {"--float", "real|ieee", C_SCHED, "float proof mode (default real)"},
	[OPT_LOG] = {"--log", "DIR", C_SCHED, "write a proof log (every obligation as SMT-LIB)"},
	[OPT_OUT] = {"-o", "OUT", C_RUN | C_BUILD, "output file"},
	[OPT_FUNC] = {"--func", "F", C_INTERP | C_EQUIV | C_JIT, "the function to run"},
	[OPT_SOLVER] = {"--solver", "z3|cvc5", C_LOG_CHECK, "the solver that re-checks"},
	[OPT_EMIT] = {"--emit", "llvm|asm|obj|header", C_BUILD, "what to write"},
	[OPT_CACHE] = {"--cache", "DIR", C_SCHED,
		       "persistent proof cache (default: $VSCHED_CACHE); nothing is solved twice"},
	[OPT_JSON] = {"--json", NULL, C_RUN | C_JIT | C_LOG_SHOW | C_LOG_CHECK,
		      "JSON lines on stdout (README: JSON output)"},
	[OPT_FMA] = {"--fma", NULL, C_BUILD | C_JIT, "fuse x * y + z into fma in real mode"},
	[OPT_CPU] = {"--cpu", "NAME", C_BUILD | C_JIT,
		     "target CPU: host (default), x86-64-v3 (AVX2), haswell, znver3, ..."},
	[OPT_CPU_FEATURES] = {"--cpu-features", "LIST", C_BUILD | C_JIT,
			      "features added to the CPU's, e.g. -avx512f or +avx2,-fma"},
	[OPT_REPEAT] = {"--repeat", "N", C_JIT, "timed runs (1..100000)"},
	[OPT_TIMEOUT] = {"--timeout-ms", "N", C_SCHED, "time limit per solver query"},
	[OPT_TRIALS] = {"--trials", "N", C_EQUIV | C_JIT, "random inputs to compare on (1..100000)"},
	[OPT_SEED] = {"--seed", "N", C_INTERP | C_EQUIV | C_JIT, "seed of the random inputs"},
	[OPT_REBUILD] = {"--rebuild", NULL, C_LOG_CHECK,
			 "re-run the logged kernel and schedule; every query must be the one vsched builds"},
};

#define COUNT(a) ((int)(sizeof a / sizeof *a))

static const Command *find_command(const char *name, const char *sub)
{
	char full[64];
	snprintf(full, sizeof full, "%s%s%s", name, sub ? " " : "", sub ? sub : "");
	for (int i = 0; i < COUNT(commands); i++)
		if (strcmp(commands[i].name, full) == 0)
			return &commands[i];
	return NULL;
}

/* The commands an option applies to, "run, build, jit". */
static void option_commands(const Option *op, char *out, size_t n)
{
	out[0] = 0;
	for (int i = 0; i < COUNT(commands); i++)
		if (op->cmds & commands[i].bit)
			snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? ", " : "",
				 commands[i].name);
}

static void command_help(FILE *f, const Command *c)
{
	fprintf(f, "usage: vsched %s %s [options]\n\n%s\n", c->name, c->args, c->summary);
	bool any = false;
	for (int i = 0; i < COUNT(options); i++) {
		const Option *op = &options[i];
		if (!(op->cmds & c->bit))
			continue;
		if (!any)
			fputs("\noptions (--opt VALUE or --opt=VALUE):\n", f);
		any = true;
		char head[64];
		snprintf(head, sizeof head, "%s%s%s", op->name, op->value ? " " : "",
			 op->value ? op->value : "");
		fprintf(f, "  %-28s %s\n", head, op->help);
	}
}

/* Options may come in any order after the command, as `--opt VALUE` or
 * `--opt=VALUE`; an option the command does not take is an error that
 * names the argument and the commands that take it. `--help` or `-h`
 * anywhere prints the command's help (exit 0). */
static int parse_opts(int argc, char **argv, int first, Opts *o)
{
	memset(o, 0, sizeof *o);
	o->trials = 20;
	o->seed = 1;
	const Option *seen[COUNT(options)];
	int nseen = 0, seen_at[COUNT(options)];
	for (int i = first; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return -1;
		if (!(a[0] == '-' && a[1])) {
			if (o->npos >= 3)
				return die_usage("too many arguments", a);
			o->pos[o->npos++] = a;
			continue;
		}
		const char *eq = strchr(a, '=');
		size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
		int which = -1;
		for (int k = 0; k < COUNT(options); k++)
			if (strlen(options[k].name) == nlen && strncmp(options[k].name, a, nlen) == 0)
				which = k;
		if (which < 0)
			return die_usage("unknown option", a);
		const Option *op = &options[which];
		const char *val = NULL;
		int at = i;
		if (op->value) {
			val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (!val)
				return die_usage("missing value after", a);
		} else if (eq) {
			fprintf(stderr, "vsched: argument %d (%s): %s takes no value\n", i - first + 1, a,
				op->name);
			return 2;
		}
		seen[nseen] = op;
		seen_at[nseen++] = at;
		unsigned long n;
		switch (which) {
		case OPT_SCHEDULE: o->schedule = val; break;
		case OPT_FLOAT: o->floatmode = val; break;
		case OPT_LOG: o->log = val; break;
		case OPT_OUT: o->out = val; break;
		case OPT_FUNC: o->func = val; break;
		case OPT_SOLVER: o->solver = val; break;
		case OPT_EMIT: o->emit = val; break;
		case OPT_CACHE: o->cache = val; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_FMA: o->fma = 1; break;
		case OPT_CPU: o->cpu = val; break;
		case OPT_CPU_FEATURES: o->cpu_features = val; break;
		case OPT_REBUILD: o->rebuild = 1; break;
		case OPT_REPEAT:
			if (!parse_number(val, &n) || n < 1 || n > 100000)
				return die_usage("expected a number (1..100000) after", op->name);
			o->repeat = (int)n;
			break;
		case OPT_TIMEOUT:
			if (!parse_number(val, &n) || n < 1 || n > 86400000)
				return die_usage("expected a number of milliseconds (1..86400000) after",
						 op->name);
			o->timeout_ms = (unsigned)n;
			break;
		case OPT_TRIALS:
			if (!parse_number(val, &n) || n < 1 || n > 100000)
				return die_usage("expected a number (1..100000) after", op->name);
			o->trials = (int)n;
			break;
		case OPT_SEED:
			if (!parse_number(val, &n))
				return die_usage("expected a number (0 or more) after", op->name);
			o->seed = n;
			break;
		}
	}
	/* which command: `log` takes its subcommand as the first argument */
	const char *name = argv[first - 1];
	const Command *c = strcmp(name, "log") == 0 ? find_command(name, o->npos ? o->pos[0] : NULL)
						    : find_command(name, NULL);
	if (!c)
		return 0; /* the caller reports the unknown command */
	o->cmd = c->bit;
	for (int k = 0; k < nseen; k++) {
		if (seen[k]->cmds & c->bit)
			continue;
		char takers[256];
		option_commands(seen[k], takers, sizeof takers);
		fprintf(stderr, "vsched: argument %d (%s): %s does not apply to `vsched %s`; it applies to: %s\n",
			seen_at[k] - first + 1, argv[seen_at[k]], seen[k]->name, c->name, takers);
		return 2;
	}
	return 0;
}

/* A JSON string, or null for NULL. */
static void json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
		else if (ch == '\n') fputs("\\n", f);
		else if (ch == '\t') fputs("\\t", f);
		else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
		else fputc(ch, f);
	}
	fputc('"', f);
}

/* The counterexample of a report as a JSON object (README, "JSON
 * output"), or null. */
static void cex_json(FILE *f, const vs_report *r)
{
	const char *kind = vs_report_cex_obligation(r);
	const char *text = vs_report_counterexample(r);
	if (!text || !*text) {
		fputs("null", f);
		return;
	}
	fputs("{\"obligation\":", f);
	json_str(f, kind);
	fputs(",\"values\":[", f);
	for (int i = 0; i < vs_report_cex_num_values(r); i++) {
		const char *name, *value;
		vs_report_cex_value(r, i, &name, &value);
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, name);
		fputs(",\"value\":", f);
		json_str(f, value);
		fputc('}', f);
	}
	fputs("],\"cells\":[", f);
	for (int i = 0; i < vs_report_cex_num_cells(r); i++) {
		const char *buf, *value;
		int n;
		const long long *idx;
		vs_report_cex_cell(r, i, &buf, &n, &idx, &value);
		fprintf(f, "%s{\"buffer\":", i ? "," : "");
		json_str(f, buf);
		fputs(",\"indices\":[", f);
		for (int k = 0; k < n; k++)
			fprintf(f, "%s%lld", k ? "," : "", idx[k]);
		fputs("],\"value\":", f);
		json_str(f, value);
		fputc('}', f);
	}
	fputs("],\"source\":[", f);
	for (int i = 0; i < vs_report_cex_num_spans(r); i++) {
		const char *file;
		int line, col;
		vs_report_cex_span(r, i, &file, &line, &col);
		fprintf(f, "%s{\"file\":", i ? "," : "");
		json_str(f, file);
		fprintf(f, ",\"line\":%d,\"col\":%d}", line, col);
	}
	fputs("],\"text\":", f);
	json_str(f, text);
	fputc('}', f);
}

/* One "step" record: the step, its verdict, its obligations, the
 * structured counterexample and the replay (README, "JSON output"). */
static void report_json(FILE *f, int index, const vs_report *r)
{
	static const char *const st[] = {"committed", "rejected", "bad input"};
	fprintf(f, "{\"type\":\"step\",\"index\":%d,\"step\":", index);
	json_str(f, vs_report_step(r));
	fprintf(f, ",\"status\":\"%s\",\"reason\":", st[vs_report_status(r)]);
	json_str(f, vs_report_reason(r));
	fputs(",\"note\":", f);
	json_str(f, vs_report_note(r));
	fputs(",\"obligations\":[", f);
	for (int i = 0; i < vs_report_num_obligations(r); i++) {
		const char *kind, *stmt, *verdict;
		double secs;
		vs_report_obligation(r, i, &kind, &stmt, &verdict, &secs);
		fprintf(f, "%s{\"kind\":", i ? "," : "");
		json_str(f, kind);
		fputs(",\"statement\":", f);
		json_str(f, stmt);
		fputs(",\"verdict\":", f);
		json_str(f, verdict);
		fprintf(f, ",\"seconds\":%.6f}", secs);
	}
	fputs("],\"counterexample\":", f);
	cex_json(f, r);
	fputs(",\"replay\":{\"status\":", f);
	json_str(f, vs_report_replay(r));
	fputs(",\"text\":", f);
	json_str(f, vs_report_replay_text(r));
	fputs("}}\n", f);
}

/* The "result" record: how the command ended ("ok", "rejected", "bad
 * input") and the kernel after the schedule, printed (null when there is
 * none: a schedule stopped). */
static void result_json(FILE *f, const char *status, const char *ir)
{
	fputs("{\"type\":\"result\",\"status\":", f);
	json_str(f, status);
	fputs(",\"ir\":", f);
	json_str(f, ir);
	fputs("}\n", f);
}

/* A text file ends with a newline. */
/* Everything printed must have reached its file: a full disk or a closed
 * pipe is an error (2), not a silent success. */
static int finish_output(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "vsched: error: cannot write the output: %s\n", strerror(errno));
		return 2;
	}
	return rc;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = path ? fopen(path, "w") : stdout;
	if (!f) {
		fprintf(stderr, "vsched: error: cannot write %s: %s\n", path, strerror(errno));
		return 2;
	}
	bool ok = fputs(text, f) != EOF;
	if (ok && *text && text[strlen(text) - 1] != '\n')
		ok = fputc('\n', f) != EOF;
	ok = fflush(f) == 0 && ok && !ferror(f);
	int err = errno;
	if (path && fclose(f) != 0 && ok) {
		ok = false;
		err = errno;
	}
	if (!ok) {
		fprintf(stderr, "vsched: error: cannot write %s: %s\n", path ? path : "the output",
			strerror(err));
		return 2;
	}
	return 0;
}

/* Parse the one kernel file and open a schedule on it with the options
 * given; 0, or the exit status when that fails. */
static int open_schedule(vs_context *ctx, const Opts *o, vs_schedule **out)
{
	*out = NULL;
	vs_module *m = vs_parse_file(ctx, o->pos[0]);
	if (!m) {
		print_error(ctx);
		return 2;
	}
	vs_options opt = {0};
	opt.timeout_ms = o->timeout_ms;
	opt.log_dir = o->log;
	opt.cache_dir = o->cache; /* NULL: the library reads VSCHED_CACHE */
	if (o->floatmode && strcmp(o->floatmode, "ieee") != 0 && strcmp(o->floatmode, "real") != 0)
		return die_usage("--float must be real or ieee", o->floatmode);
	opt.float_ieee = o->floatmode && strcmp(o->floatmode, "ieee") == 0;
	if (!progress_on && !o->json)
		progress_on = progress_start(&progress, &opt);
	else if (progress_on) {
		opt.progress = progress_step;
		opt.progress_ud = &progress;
	}
	vs_schedule *s = vs_schedule_new(ctx, m, &opt);
	if (!s) {
		print_error(ctx);
		return 2;
	}
	*out = s;
	return 0;
}

/* Where the verdicts came from (text on stderr, or a JSON line on
 * stdout), and the persistent cache's warnings on stderr. */
static void print_cache_summary(vs_schedule *s, int json)
{
	int solved, mem, disk;
	const char *warnings;
	vs_schedule_cache_stats(s, &solved, &mem, &disk, &warnings);
	if (warnings)
		err_puts(warnings);
	if (json)
		printf("{\"type\":\"summary\",\"obligations\":%d,\"solved\":%d,\"memory_cache_hits\":%d,"
		       "\"persistent_cache_hits\":%d}\n",
		       solved + mem + disk, solved, mem, disk);
	else
		fprintf(stderr, "obligations: %d solved, %d from the in-memory cache, "
			"%d from the persistent cache\n", solved, mem, disk);
}

/* The persistent cache's warnings alone. */
static void print_cache_warnings(vs_schedule *s)
{
	const char *warnings;
	vs_schedule_cache_stats(s, NULL, NULL, NULL, &warnings);
	if (warnings)
		err_puts(warnings);
}

static int cmd_run(vs_context *ctx, const Opts *o)
{
	if (o->npos != 1)
		return die_usage("run needs exactly one kernel file", NULL);
	vs_schedule *s;
	int failed = open_schedule(ctx, o, &s);
	if (failed)
		return failed;
	vs_status st = VS_OK;
	if (o->schedule)
		st = vs_run_script_file(s, o->schedule);
	for (int i = 0; i < vs_num_reports(s); i++) {
		const vs_report *r = vs_report_at(s, i);
		if (o->json) {
			report_json(stdout, i + 1, r);
			continue;
		}
		char *text = vs_report_text(r);
		err_puts(text);
		free(text);
	}
	print_cache_summary(s, o->json);
	if (st != VS_OK) {
		const char *err = vs_last_error(ctx);
		/* a rejection's reason is already in its report above */
		const vs_report *last = vs_last_report(s);
		const char *why = last ? vs_report_reason(last) : NULL;
		if (st == VS_REJECTED && why && !o->json && strstr(err, why))
			err = "";
		if (*err)
			err_puts(err), err_puts(err[strlen(err) - 1] == '\n' ? "" : "\n");
		fprintf(stderr, "vsched: schedule stopped: %s\n",
			st == VS_REJECTED ? "a step was rejected; the IR before it is kept" : "bad input");
		if (o->json)
			result_json(stdout, st == VS_REJECTED ? "rejected" : "bad input", NULL);
		vs_schedule_free(s);
		return st == VS_REJECTED ? 1 : 2;
	}
	char *text = vs_module_print(vs_schedule_result(s));
	if (o->json)
		result_json(stdout, "ok", text);
	int rc = o->json && !o->out ? 0 : write_text(o->out, text);
	free(text);
	vs_schedule_free(s);
	return rc;
}

static int cmd_interp(vs_context *ctx, const Opts *o)
{
	if (o->npos != 1)
		return die_usage("interp needs exactly one kernel file", NULL);
	vs_module *m = vs_parse_file(ctx, o->pos[0]);
	if (!m) {
		print_error(ctx);
		return 2;
	}
	char *out = NULL;
	vs_status st = vs_interp(ctx, m, o->func, o->seed, &out);
	if (out)
		fputs(out, stdout);
	free(out);
	if (st == VS_BAD_INPUT)
		print_error(ctx);
	return (int)st;
}

static int cmd_equiv(vs_context *ctx, const Opts *o)
{
	if (o->npos != 2)
		return die_usage("equiv needs two kernel files", NULL);
	vs_module *a = vs_parse_file(ctx, o->pos[0]);
	vs_module *b = a ? vs_parse_file(ctx, o->pos[1]) : NULL;
	if (!a || !b) {
		print_error(ctx);
		return 2;
	}
	char *report = NULL;
	vs_status st = vs_equiv(ctx, a, b, o->func, o->trials, o->seed, &report);
	if (report)
		fputs(report, st == VS_OK ? stdout : stderr);
	/* a report already says why there is no verdict */
	if (st == VS_BAD_INPUT && !report)
		print_error(ctx);
	free(report);
	return (int)st;
}

static int cmd_log(const Opts *o)
{
	if (o->npos != 2)
		return die_usage("log needs 'show DIR' or 'check DIR'", NULL);
	char *out = NULL;
	vs_status st;
	if (strcmp(o->pos[0], "show") == 0)
		st = vs_log_show(o->pos[1], o->json, &out);
	else if (strcmp(o->pos[0], "check") == 0) {
		const char *solver = o->solver ? o->solver : "z3";
		if (strcmp(solver, "z3") != 0 && strcmp(solver, "cvc5") != 0)
			return die_usage("--solver must be z3 or cvc5", solver);
		if (o->rebuild && o->json)
			return die_usage("--json does not apply with --rebuild", NULL);
		st = o->rebuild ? vs_log_rebuild(o->pos[1], solver, &out)
		     : o->json ? vs_log_check_json(o->pos[1], solver, &out)
				: vs_log_check(o->pos[1], solver, &out);
	} else
		return die_usage("unknown log command", o->pos[0]);
	/* JSON goes to stdout whatever the verdict (the result record says it) */
	if (out)
		fputs(out, st == VS_OK || o->json ? stdout : stderr);
	free(out);
	return (int)st;
}

/* ---- build and jit: code generation through the backend ---- */

/* Parse, schedule (every step must be committed), and compile. Returns
 * the exit status; *out gets the program on success. */
static int schedule_and_build(vs_context *ctx, const Opts *o, const char *cmd,
			      vs_schedule **sched, vs_program **out)
{
	*out = NULL;
	*sched = NULL;
	if (o->npos != 1)
		return die_usage(cmd, "needs exactly one kernel file");
	if (vs_check_target(ctx, o->cpu, o->cpu_features) != VS_OK) {
		print_error(ctx);
		return 2;
	}
	vs_schedule *s;
	int failed = open_schedule(ctx, o, &s);
	if (failed)
		return failed;
	*sched = s;
	vs_status st = o->schedule ? vs_run_script_file(s, o->schedule) : VS_OK;
	if (st != VS_OK) {
		const vs_report *r = vs_last_report(s);
		if (r) {
			char *text = vs_report_text(r);
			err_puts(text);
			free(text);
		}
		const char *err = vs_last_error(ctx);
		if (*err)
			err_puts(err), err_puts(err[strlen(err) - 1] == '\n' ? "" : "\n");
		fprintf(stderr, "vsched: %s: the schedule was not proven; nothing is compiled\n", cmd);
		return st == VS_REJECTED ? 1 : 2;
	}
	vs_build_options bo = {0};
	bo.contract_fma = o->fma;
	bo.cpu = o->cpu;
	bo.features = o->cpu_features;
	*out = vs_build(s, &bo);
	if (!*out) {
		print_error(ctx);
		fprintf(stderr, "vsched: %s: compilation failed\n", cmd);
		return 1;
	}
	return 0;
}

static int cmd_build(vs_context *ctx, const Opts *o)
{
	if (!o->emit)
		return die_usage("build needs --emit llvm|asm|obj|header", NULL);
	if (strcmp(o->emit, "obj") == 0 && !o->out)
		return die_usage("build --emit obj needs -o OUT", NULL);
	vs_schedule *s;
	vs_program *p;
	int rc = schedule_and_build(ctx, o, "build", &s, &p);
	if (rc == 0 && vs_program_warning(p))
		fprintf(stderr, "%s\n", vs_program_warning(p));
	if (rc == 0 && vs_program_emit(p, o->emit, o->out) != VS_OK) {
		print_error(ctx);
		rc = 2;
	}
	if (s)
		print_cache_warnings(s);
	vs_program_free(p);
	vs_schedule_free(s);
	return rc;
}

/* Steps, obligations proven and solver time of a schedule. */
static void print_schedule_summary(vs_schedule *s)
{
	int proven = 0, total = 0;
	double secs = 0;
	for (int i = 0; i < vs_num_reports(s); i++) {
		const vs_report *r = vs_report_at(s, i);
		for (int k = 0; k < vs_report_num_obligations(r); k++) {
			const char *verdict;
			double t;
			vs_report_obligation(r, k, NULL, NULL, &verdict, &t);
			total++;
			proven += strcmp(verdict, "proven") == 0;
			secs += t;
		}
		printf("  step %d: %s\n", i + 1, vs_report_step(r));
	}
	printf("schedule: %d steps, %d of %d obligations proven, solver %.3f s\n",
	       vs_num_reports(s), proven, total, secs);
	int solved, mem, disk;
	vs_schedule_cache_stats(s, &solved, &mem, &disk, NULL);
	printf("obligations: %d solved, %d from the in-memory cache, %d from the persistent cache\n",
	       solved, mem, disk);
}

/* The kernel as written, compiled too, to compare run times. */
static vs_program *build_unscheduled(vs_context *ctx, const Opts *o, vs_schedule **s)
{
	*s = NULL;
	vs_module *m = vs_parse_file(ctx, o->pos[0]);
	*s = m ? vs_schedule_new(ctx, m, NULL) : NULL;
	vs_build_options bo = {0};
	bo.contract_fma = o->fma;
	bo.cpu = o->cpu;
	bo.features = o->cpu_features;
	return *s ? vs_build(*s, &bo) : NULL;
}

/* jit --json: the steps, the cache summary, then a "build" record. */
static void jit_json_head(vs_schedule *s, vs_program *p)
{
	for (int i = 0; i < vs_num_reports(s); i++)
		report_json(stdout, i + 1, vs_report_at(s, i));
	print_cache_summary(s, 1);
	int nobs, widened;
	double solver, compile;
	vs_program_stats(p, &nobs, &widened, &solver, &compile);
	printf("{\"type\":\"build\",\"obligations\":%d,\"widened\":%d,\"solver_seconds\":%.6f,"
	       "\"compile_seconds\":%.6f,\"warnings\":",
	       nobs, widened, solver, compile);
	json_str(stdout, vs_program_warning(p));
	printf("}\n");
}

static int cmd_jit(vs_context *ctx, const Opts *o)
{
	vs_schedule *s, *us = NULL;
	vs_program *p, *up = NULL;
	int rc = schedule_and_build(ctx, o, "jit", &s, &p);
	if (rc != 0) {
		vs_schedule_free(s);
		return rc;
	}
	if (o->schedule)
		up = build_unscheduled(ctx, o, &us);
	if (o->json) {
		jit_json_head(s, p);
	} else {
		print_schedule_summary(s);
		int nobs, widened;
		double solver, compile;
		vs_program_stats(p, &nobs, &widened, &solver, &compile);
		printf("lowering: %d obligations proven (flattening, annotations; %d indices widened "
		       "to int64), solver %.3f s; compiled in %.3f s\n", nobs, widened, solver, compile);
		if (o->cpu || o->cpu_features)
			printf("target: CPU %s%s%s (both forms), run on this host\n", o->cpu ? o->cpu : "host",
			       o->cpu_features ? ", features " : "", o->cpu_features ? o->cpu_features : "");
		if (vs_program_warning(p))
			printf("note: %s\n", vs_program_warning(p));
	}
	const vs_module *m = vs_schedule_result(s);
	int nf = vs_module_num_funcs(m);
	for (int i = 0; i < nf && rc == 0; i++) {
		const char *f = vs_module_func_name(m, i);
		if (o->func && strcmp(o->func, f) != 0)
			continue;
		char *report = NULL;
		vs_status st = vs_program_check(p, f, o->trials ? o->trials : 3, o->seed, &report);
		if (o->json) {
			static const char *const sts[] = {"agree", "disagree", "error"};
			printf("{\"type\":\"check\",\"function\":");
			json_str(stdout, f);
			printf(",\"status\":\"%s\",\"text\":", sts[st]);
			json_str(stdout, report);
			printf("}\n");
		} else {
			printf("%s: JIT vs interpreter: %s", f, report ? report : "?\n");
		}
		free(report);
		if (st != VS_OK) {
			rc = st == VS_REJECTED ? 1 : 2;
			break;
		}
		double t, tu;
		int repeat = o->repeat ? o->repeat : 5;
		if (vs_program_time(p, f, o->seed, repeat, &t) != VS_OK)
			continue;
		bool have_u = up && vs_program_time(up, f, o->seed, repeat, &tu) == VS_OK;
		if (o->json) {
			printf("{\"type\":\"time\",\"function\":");
			json_str(stdout, f);
			printf(",\"repeat\":%d,\"scheduled_ms\":%.6f", repeat, t * 1e3);
			if (have_u)
				printf(",\"as_written_ms\":%.6f,\"speedup\":%.4f", tu * 1e3,
				       t > 0 ? tu / t : 0.0);
			else
				printf(",\"as_written_ms\":null,\"speedup\":null");
			printf("}\n");
			continue;
		}
		printf("%s: run time %.4f ms scheduled (median of %d JIT runs)", f, t * 1e3, repeat);
		if (have_u)
			printf(", %.4f ms as written (speedup %.2fx)", tu * 1e3, t > 0 ? tu / t : 0.0);
		printf("\n");
	}
	if (o->json && rc == 0) {
		char *text = vs_module_print(m);
		result_json(stdout, "ok", text);
		free(text);
	}
	vs_program_free(up);
	vs_schedule_free(us);
	print_cache_warnings(s);
	vs_program_free(p);
	vs_schedule_free(s);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("vsched %s\n", vs_version());
		return 0;
	}
	if (strcmp(argv[1], "help") == 0) {
		/* vsched help, vsched help run, vsched help log check;
		 * vsched help primitives: the README's table */
		if (argc == 3 && strcmp(argv[2], "primitives") == 0) {
			char *doc = vs_primitives_doc();
			fputs(doc, stdout);
			free(doc);
			return finish_output(0);
		}
		const Command *c = argc > 2 ? find_command(argv[2], argc > 3 ? argv[3] : NULL) : NULL;
		if (argc > 2 && !c && strcmp(argv[2], "log") == 0)
			c = find_command("log", "show");
		if (argc > 2 && !c)
			return die_usage("no such command", argv[2]);
		if (c)
			command_help(stdout, c);
		else
			fputs(usage, stdout);
		return 0;
	}
	Opts o;
	int rc = parse_opts(argc, argv, 2, &o);
	if (rc == -1) {
		const Command *c = strcmp(argv[1], "log") == 0
					   ? find_command("log", o.npos ? o.pos[0] : "show")
					   : find_command(argv[1], NULL);
		if (!c)
			return die_usage("unknown command", argv[1]);
		command_help(stdout, c);
		return 0;
	}
	if (rc)
		return rc;
	const char *cmd = argv[1];
	if (strcmp(cmd, "log") == 0)
		return finish_output(cmd_log(&o));
	vs_context *ctx = vs_context_new();
	if (!ctx)
		return 2;
	if (strcmp(cmd, "run") == 0)
		rc = cmd_run(ctx, &o);
	else if (strcmp(cmd, "interp") == 0)
		rc = cmd_interp(ctx, &o);
	else if (strcmp(cmd, "equiv") == 0)
		rc = cmd_equiv(ctx, &o);
	else if (strcmp(cmd, "build") == 0)
		rc = cmd_build(ctx, &o);
	else if (strcmp(cmd, "jit") == 0)
		rc = cmd_jit(ctx, &o);
	else
		rc = die_usage("unknown command", cmd);
	if (progress_on)
		progress_stop(&progress);
	vs_context_free(ctx);
	return finish_output(rc);
}
