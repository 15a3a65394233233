/* smt/encode_obligation.c — an Obligation as one Z3 query: the
 * propositional level of hypotheses and goal (a float == that holds under
 * both the IEEE and the same-value reading), the range facts of the
 * variables, smt_encode itself, the query's SMT-LIB text with named
 * assertions, and freeing an encoding. Terms are smt/encode.c's. */
#include "smt/encode_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- the propositional level of hyps and goal ----------
 * In ieee mode a float `==` means two different things in obligations:
 * a program comparison (IEEE: -0.0 == 0.0, NaN != NaN; path conditions,
 * T.assume facts) or "the same value" (SMT `=`: the no-op and simplify
 * goals and producer facts of semantics.md, under which x + 0.0 == x
 * fails at x = -0.0). The IR has one operator for both, so an equality
 * reached from the root through and/or/not/let/select branches is
 * encoded to hold under either reading: where the assertion states it
 * (a hypothesis), as the weaker `fp.eq or =`; where the assertion denies
 * it (the goal, under (not goal)), as the stronger `fp.eq and =`. A
 * proof therefore holds whichever reading the rewrite meant; the price
 * is that NaN == NaN no longer excludes NaN in a hypothesis, and a goal
 * equality also needs both sides non-NaN. Comparisons inside terms (a
 * select's condition, under a bool ==) are program comparisons: fp.eq. */

typedef enum {
	POL_ASSERTED, /* weakest encoding is sound */
	POL_DENIED,   /* strongest encoding is sound */
} Polarity;

static Polarity flip(Polarity p)
{
	return p == POL_ASSERTED ? POL_DENIED : POL_ASSERTED;
}

static Z3_ast enc_prop(SmtEncoding *e, const Expr *x, Polarity pol);

static bool is_ieee_equality(const SmtEncoding *e, const Expr *x)
{
	if (e->fm != FLOAT_IEEE || x->kind != EX_BIN ||
	    (x->u.bin.op != OP_EQ && x->u.bin.op != OP_NE) || !x->u.bin.a ||
	    !x->u.bin.b)
		return false;
	return enc_class_of(enc_operand_dtype(x->u.bin.a, x->u.bin.b)) == CL_FLOAT;
}

static Z3_ast enc_value_equality(SmtEncoding *e, const Expr *x, Polarity pol)
{
	DType t = enc_operand_dtype(x->u.bin.a, x->u.bin.b);
	Z3_ast a = enc_as(e, x->u.bin.a, t), b = enc_as(e, x->u.bin.b, t);
	if (x->u.bin.op == OP_NE) /* a != b is not (a == b) */
		pol = flip(pol);
	Z3_ast ieee = enc_mk2(e, Z3_mk_fpa_eq, a, b), same = enc_mk2(e, Z3_mk_eq, a, b);
	if (e->st->same_value_goal) /* the obligation says which reading */
		return x->u.bin.op == OP_NE ? enc_mk_not(e, same) : same;
	Z3_ast r = enc_mkn(e, pol == POL_ASSERTED ? Z3_mk_or : Z3_mk_and, ieee, same);
	return x->u.bin.op == OP_NE ? enc_mk_not(e, r) : r;
}

static Z3_ast enc_prop_let(SmtEncoding *e, const Expr *x, Polarity pol)
{
	if (!enc_bind_let(e, x))
		return NULL;
	Z3_ast body = enc_prop(e, x->u.let.body, pol);
	enc_unbind_let(e);
	return body;
}

static Z3_ast enc_prop(SmtEncoding *e, const Expr *x, Polarity pol)
{
	if (!x)
		return enc_fail(e, "internal: missing expression");
	if (x->dtype != DT_BOOL)
		return enc_as(e, x, DT_BOOL);
	if (is_ieee_equality(e, x))
		return enc_value_equality(e, x, pol);
	if (x->kind == EX_BIN && binop_is_logical(x->u.bin.op)) {
		Z3_ast a = enc_prop(e, x->u.bin.a, pol);
		Z3_ast b = enc_prop(e, x->u.bin.b, pol);
		return enc_mkn(e, x->u.bin.op == OP_AND ? Z3_mk_and : Z3_mk_or, a, b);
	}
	if (x->kind == EX_NOT)
		return enc_mk_not(e, enc_prop(e, x->u.un.a, flip(pol)));
	if (x->kind == EX_SELECT) {
		Z3_ast c = enc_as(e, x->u.sel.cond, DT_BOOL);
		Z3_ast a = enc_prop(e, x->u.sel.a, pol);
		Z3_ast b = enc_prop(e, x->u.sel.b, pol);
		return enc_mk_ite(e, c, a, b);
	}
	if (x->kind == EX_LET)
		return enc_prop_let(e, x, pol);
	return enc_as(e, x, DT_BOOL);
}

/* ---------- obligations ---------- */

static Z3_ast in_range(SmtEncoding *e, Z3_ast x, Interval r)
{
	Z3_ast lo = enc_mk_int(e, (int64_t)r.lo), hi = enc_mk_int(e, (int64_t)r.hi);
	return enc_mkn(e, Z3_mk_and, enc_mk2(e, Z3_mk_le, lo, x), enc_mk2(e, Z3_mk_le, x, hi));
}

/* The range facts, first in asserts (then `more` entries follow): every
 * integer T.undef() and buffer cell read holds a value of its dtype, and
 * every variable that occurs lies within its dtype and, when a left-out
 * wrap rests on them (uses_learnt), the bounds ranges_learn derived from
 * the query; a fact the query states itself is left out. Each fact
 * follows from the dtypes and the query, so it removes no state the
 * interpreter can reach. Proofs are sound without them; they make every
 * model a reachable state: counterexamples are real. */
static bool add_range_facts(SmtEncoding *e, int more)
{
	int n = 0;
	for (int i = 0; i < e->nsyms; i++)
		n += e->syms[i].kind != SYM_BUFFER;
	e->asserts = calloc((size_t)(n + e->nloads + e->st->napps + more),
			    sizeof *e->asserts);
	if (!e->asserts)
		return enc_fail(e, "out of memory"), false;
	/* the bounds some left-out wrap rests on */
	RangeInfo *basis = e->st->uses_learnt ? e->st->ranges : e->st->stated;
	for (int i = 0; i < e->nsyms; i++) {
		const SmtSym *s = &e->syms[i];
		Interval r;
		if (s->kind == SYM_BUFFER || s->kind == SYM_FUNC ||
		    enc_class_of(s->dtype) != CL_INT || !iv_of_dtype(s->dtype, &r))
			continue;
		/* a variable that occurs nowhere can take any value */
		if (s->kind == SYM_VAR &&
		    (!s->occurs || ranges_var_stated(basis, s->var)))
			continue;
		if (s->kind == SYM_VAR)
			r = ranges_var(basis, s->var);
		if (!(e->asserts[e->nasserts++] = in_range(e, s->value, r)))
			return false;
	}
	for (int i = 0; i < e->nloads; i++) {
		Interval r;
		DType t = e->syms[e->loads[i].sym].dtype;
		if (enc_class_of(t) != CL_INT || !iv_of_dtype(t, &r))
			continue;
		if (!(e->asserts[e->nasserts++] = in_range(e, e->loads[i].app, r)))
			return false;
	}
	/* an integer math call (T.abs) gives a value of its dtype */
	for (int i = 0; i < e->st->napps; i++) {
		Interval r;
		if (!iv_of_dtype(e->st->int_apps[i].t, &r))
			continue;
		if (!(e->asserts[e->nasserts++] = in_range(e, e->st->int_apps[i].app, r)))
			return false;
	}
	e->nranges = e->nasserts;
	return true;
}

/* The hypotheses, then (not goal): o->nhyps + 1 entries of props. */
static bool encode_props(SmtEncoding *e, const Obligation *o, Z3_ast *props)
{
	for (int i = 0; i < o->nhyps; i++)
		if (!(props[i] = enc_prop(e, o->hyps[i], POL_ASSERTED)))
			return false;
	e->st->same_value_goal = o->same_value;
	props[o->nhyps] = enc_mk_not(e, enc_prop(e, o->goal, POL_DENIED));
	e->st->same_value_goal = false;
	return props[o->nhyps] != NULL;
}

bool smt_encode(Z3_context c, const Obligation *o, FloatMode fm,
		SmtEncoding *e)
{
	memset(e, 0, sizeof *e);
	e->ctx = c;
	e->fm = fm;
	e->ob = o;
	smt_z3_error_clear();
	e->st = calloc(1, sizeof *e->st);
	if (!e->st)
		return enc_fail(e, "out of memory"), false;
	if (!c)
		return enc_fail(e, "internal: no z3 context"), false;
	if (!o || !o->goal)
		return enc_fail(e, "internal: obligation without a goal"), false;
	if (!enc_make_sorts(e))
		return false;
	EncodeState *st = e->st;
	if (!(st->ranges = ranges_new(false)) || !(st->stated = ranges_new(true)) ||
	    !ranges_learn(st->ranges, o->nhyps, o->hyps, o->goal) ||
	    !ranges_learn(st->stated, o->nhyps, o->hyps, o->goal))
		return enc_fail(e, "out of memory"), false;
	for (int i = 0; i < o->nvars; i++)
		if (o->vars[i] && enc_var_sym(e, o->vars[i]) < 0)
			return false;
	Z3_ast *props = calloc((size_t)o->nhyps + 1, sizeof *props);
	if (!props)
		return enc_fail(e, "out of memory"), false;
	/* the range facts go first but are known only once all is encoded */
	bool ok = encode_props(e, o, props) && add_range_facts(e, o->nhyps + 1);
	for (int i = 0; ok && i <= o->nhyps; i++)
		e->asserts[e->nasserts++] = props[i];
	free(props);
	return ok && !e->error;
}

/* The names of the assertions: range_K for the range facts, the
 * obligation's names for its hypotheses (hyp_K for one without), goal for
 * the negated goal. Each is a plain SMT-LIB symbol ([A-Za-z0-9_], not
 * starting with a digit), told apart from each other and from every
 * declared symbol by a suffix _2, _3, ... */
static bool name_taken(char **names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return true;
	return false;
}

static char **assertion_names(SmtEncoding *e)
{
	Z3_context c = e->ctx;
	int ntaken = e->nsyms, n = e->nasserts;
	char **taken = calloc((size_t)(ntaken + n) + 1, sizeof *taken);
	if (!taken)
		return NULL;
	for (int i = 0; i < e->nsyms; i++) {
		const char *s = Z3_get_symbol_string(c, Z3_get_decl_name(c, e->syms[i].decl));
		taken[i] = strdup(s ? s : "");
	}
	char **names = taken + ntaken;
	int nhyps = e->ob ? e->ob->nhyps : 0;
	for (int i = 0; i < n; i++) {
		int h = i - e->nranges; /* the hypothesis, when 0 <= h < nhyps */
		const char *given = h >= 0 && h < nhyps ? obligation_hyp_name(e->ob, e->ob->hyps[h]) : NULL;
		StrBuf b = {0};
		if (i < e->nranges)
			sb_printf(&b, "range_%d", i + 1);
		else if (i == n - 1)
			sb_puts(&b, "goal");
		else if (!given)
			sb_printf(&b, "hyp_%d", h + 1);
		for (const char *p = given; p && *p; p++) {
			char ch = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
						  (*p >= '0' && *p <= '9')
					  ? *p
					  : '_';
			if (b.n == 0 && ch >= '0' && ch <= '9')
				sb_puts(&b, "h_");
			sb_put(&b, &ch, 1);
		}
		char *base = sb_take(&b), *name = strdup(base);
		for (int k = 2; name && name_taken(taken, ntaken + i, name); k++) {
			free(name);
			name = NULL;
			if (asprintf(&name, "%s_%d", base, k) < 0)
				name = NULL;
		}
		free(base);
		names[i] = name;
	}
	return taken;
}

static void names_free(char **taken, int n)
{
	for (int i = 0; taken && i < n; i++)
		free(taken[i]);
	free(taken);
}

char *smt_encoding_text(SmtEncoding *e)
{
	Z3_context c = e->ctx;
	StrBuf b = {0};
	const char *msg = NULL;
	char **taken = assertion_names(e);
	if (!taken) {
		enc_fail(e, "out of memory");
		return NULL;
	}
	char **names = taken + e->nsyms;
	sb_puts(&b, "(set-logic ALL)\n");
	for (int i = 0; i < e->nsyms; i++) {
		const char *d = Z3_func_decl_to_string(c, e->syms[i].decl);
		if (!d || smt_z3_error(&msg))
			goto failed;
		sb_puts(&b, d);
		sb_puts(&b, "\n");
	}
	for (int i = 0; i < e->nasserts; i++) {
		if (i == 0 && e->nranges > 0)
			sb_puts(&b, "; value ranges: dtypes, and bounds that the "
				    "assertions below imply\n");
		if (i == e->nranges)
			sb_puts(&b, "; hypotheses, then the negated goal\n");
		const char *t = Z3_ast_to_string(c, e->asserts[i]);
		if (!t || smt_z3_error(&msg))
			goto failed;
		if (!names[i])
			goto failed;
		sb_puts(&b, "(assert (! ");
		sb_puts(&b, t);
		sb_printf(&b, " :named %s))\n", names[i]);
	}
	sb_puts(&b, "(check-sat)\n");
	names_free(taken, e->nsyms + e->nasserts);
	return sb_take(&b);
failed:
	names_free(taken, e->nsyms + e->nasserts);
	free(sb_take(&b));
	enc_fail(e, "internal: z3 error while printing: %s", msg ? msg : "?");
	return NULL;
}

void smt_encoding_disown(SmtEncoding *e)
{
	if (e->st)
		e->st->nowned = 0;
}

void smt_encoding_free(SmtEncoding *e)
{
	EncodeState *st = e->st;
	if (st) {
		for (size_t i = 0; i < st->nowned; i++)
			Z3_dec_ref(e->ctx, st->owned[i]);
		free(st->owned);
		ptrmap_free(&st->vars);
		ptrmap_free(&st->bufs);
		ptrmap_free(&st->memo);
		ptrmap_free(&st->loadset);
		ranges_free(st->ranges);
		ranges_free(st->stated);
		free(st->env);
		free(st->int_apps);
		free(st);
	}
	for (int i = 0; i < e->nloads; i++)
		free(e->loads[i].idx);
	free(e->loads);
	free(e->syms);
	free(e->asserts);
	free(e->error);
	memset(e, 0, sizeof *e);
}
