/* rewrites/schedule/script.h — the schedule-script reader (interfaces.md, "Schedule
 * scripts"): `.sched` text to a list of calls on `sch`, each with its
 * left-hand names and classified arguments. Lambdas and general
 * expressions keep their text range, to be parsed later in a function's
 * scope with parse_lambda_range / parse_expr_range (kernel/parse.h). */
#ifndef VS_REWRITES_SCRIPT_H
#define VS_REWRITES_SCRIPT_H

#include "kernel/ir.h"

typedef enum {
	ARG_INT,    /* ival (a leading minus folded) */
	ARG_FLOAT,  /* fval (a leading minus folded) */
	ARG_STRING, /* str */
	ARG_NONE,   /* None */
	ARG_BOOL,   /* ival: 1 for True, 0 for False */
	ARG_UNDEF,  /* T.undef() */
	ARG_NAME,   /* str: a bare identifier */
	ARG_LAMBDA, /* [start, end) covers `lambda ...: ...` */
	ARG_EXPR,   /* any other expression: [start, end) */
	ARG_LIST,   /* `[a, b]` or `(a, b)`: nitems classified items */
	ARG_INDEX,  /* `loops[k]`: str = the name, ival = k (may be negative) */
	ARG_STAR,   /* `*loops`: str = the name (unpacked in place) */
} ScriptArgKind;

typedef struct ScriptArg {
	const char *keyword; /* NULL if positional */
	ScriptArgKind kind;
	int64_t ival;
	double fval;
	const char *str; /* ARG_STRING / ARG_NAME */
	int start, end;	 /* text range of the argument's value in src->text */
	Span span;
	int nitems;	 /* ARG_LIST */
	struct ScriptArg *items;
} ScriptArg;

typedef struct ScriptCall {
	int nlhs;
	const char **lhs; /* `_` may repeat; */
	int lhs_star;	  /* index of the `*name` on the left, or -1 */
	bool unpack;	  /* `(x,) = ...` / `x, = ...`: one name unpacks a list */
	const char *method;
	int nargs;
	ScriptArg *args;
	Span span;
} ScriptCall;

typedef struct Script {
	const Source *src;
	int ncalls;
	ScriptCall *calls;
} Script;

/* NULL (with diagnostics) on a malformed script. */
Script *script_parse(Arena *a, const Source *src, DiagList *d);

/* The argument at positional index `position` or with name `keyword`
 * (either may be -1 / NULL); NULL if absent. */
const ScriptArg *script_arg(const ScriptCall *c, int position,
			    const char *keyword);

#endif
