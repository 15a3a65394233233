/* rewrites/schedule/primitives.c — the table of schedule primitives
 * (primitives.h): arguments, C API function and what each proves; the
 * check of a string argument shared by the script reader and the API; the
 * README's table printed from it. */
#include "rewrites/schedule/primitives.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ir.h"

#define NAME_OPT(n, k) {n, k, "None", 0, NULL}
#define REQ(n, k) {n, k, NULL, 0, NULL}
#define BOOL_OPT(n, d) {n, PK_BOOL, d, 0, NULL}

static const char TAILS[] = "guard|perfect|cut|cut_and_guard";

const PrimSpec prim_table[] = {
	/* ---- loops ---- */
	{PRIM_SPLIT, "split", false, 3,
	 {REQ("loop", PK_LOOP), REQ("factor", PK_INT), {"tail", PK_WORD, "\"guard\"", 0, TAILS},
	  {"outer", PK_NAME, "\"i_o\"", PA_API_ONLY, NULL}, {"inner", PK_NAME, "\"i_i\"", PA_API_ONLY, NULL},
	  {"tail_loop", PK_NAME, NULL, PA_API_ONLY, NULL}},
	 "vs_split, vs_split_tail", "divisibility, no index overflow; `io, ii, it = sch.split(..., tail=\"cut\")` names the tail loop"},
	{PRIM_SPLIT_TVM, "split", true, 4,
	 {REQ("loop", PK_LOOP), REQ("factors", PK_INTS), BOOL_OPT("preserve_unit_iters", "True"),
	  BOOL_OPT("disable_predication", "False"), {"tail", PK_WORD, "\"guard\"", 0, TAILS}},
	 NULL, "TVM's form: a sequence of two-way splits, as `split`; the factors cover the extent"},
	{PRIM_FUSE, "fuse", false, -1,
	 {REQ("loops", PK_LOOPS), BOOL_OPT("preserve_unit_iters", "True"),
	  {"fused", PK_NAME, "\"i_j_fused\"", PA_API_ONLY, NULL}},
	 "vs_fuse", "non-negative extents, no overflow; the inner extent cannot fault where the outer loop runs nothing"},
	{PRIM_REORDER, "reorder", false, -1, {REQ("loops", PK_LOOPS)}, "vs_reorder",
	 "swapped iteration pairs commute (float reductions only in `real` mode); a range moved out of a loop that may run nothing cannot fault"},
	{PRIM_PARALLEL, "parallel", false, 1, {REQ("loop", PK_LOOP)}, "vs_parallel",
	 "no race between iterations; constant extents"},
	{PRIM_VECTORIZE, "vectorize", false, 1, {REQ("loop", PK_LOOP)}, "vs_vectorize",
	 "no race between iterations; constant extents; of a reduction loop: `op` exact on the dtype in "
	 "the float mode (`vectorize.reassociate`: float `+ *` in `real` mode only), compiled to per-lane "
	 "partial results in vector registers and one final reduction"},
	{PRIM_UNROLL, "unroll", false, 1, {REQ("loop", PK_LOOP)}, "vs_unroll", "no race between iterations; constant extents"},
	/* ---- layout ---- */
	{PRIM_TRANSFORM_LAYOUT, "transform_layout", false, 3,
	 {REQ("buffer", PK_BUFFER), REQ("index_map", PK_MAP), NAME_OPT("pad_value", PK_VALUE),
	  NAME_OPT("block", PK_BLOCK), NAME_OPT("func", PK_FUNC), NAME_OPT("inverse", PK_MAP)},
	 "vs_transform_layout",
	 "injective, inside the physical shape, left inverse; pad stage or entry `T.assume`"},
	{PRIM_TRANSFORM_LAYOUT_TVM, "transform_layout", true, 4,
	 {REQ("block", PK_BLOCK), REQ("buffer", PK_BUFFER_INDEX), REQ("index_map", PK_MAP),
	  NAME_OPT("pad_value", PK_VALUE), BOOL_OPT("assume_injective_transform", "False"),
	  NAME_OPT("inverse", PK_MAP), NAME_OPT("func", PK_FUNC)},
	 NULL, "TVM's form of `transform_layout`: the same proofs"},
	{PRIM_TRANSFORM_BLOCK_LAYOUT, "transform_block_layout", false, 2,
	 {REQ("block", PK_BLOCK), REQ("index_map", PK_MAP)}, "vs_transform_block_layout",
	 "the map is a bijection of the block's iteration domain onto the new loops (in bounds, "
	 "injective, left inverse, onto); the init runs at the same instances; reordered instances "
	 "commute"},
	{PRIM_SEQUENTIAL_BUFFER_ACCESS, "sequential_buffer_access", false, 1,
	 {REQ("buffer", PK_BUFFER), NAME_OPT("block", PK_BLOCK)}, "vs_sequential_buffer_access",
	 "each split / tile / fission / skew / reorder / simplify step"},
	/* ---- overcompute and clean-up ---- */
	{PRIM_REMOVE_BRANCHING_THROUGH_OVERCOMPUTE, "remove_branching_through_overcompute", false, 0,
	 {NAME_OPT("block", PK_BLOCK), NAME_OPT("loop", PK_LOOP), BOOL_OPT("strict", "False")},
	 "vs_remove_branching_through_overcompute", "extra instances safe; each store a no-op or dead"},
	{PRIM_REMOVE_OVERCOMPUTE_THROUGH_BRANCHING, "remove_overcompute_through_branching", false, 0,
	 {NAME_OPT("block", PK_BLOCK), NAME_OPT("loop", PK_LOOP), BOOL_OPT("strict", "False")},
	 "vs_remove_overcompute_through_branching",
	 "skipped instances no-op or dead (`loop=` is not supported)"},
	{PRIM_SIMPLIFY, "simplify", false, 0,
	 {BOOL_OPT("transitively_prove_inequalities", "True"),
	  BOOL_OPT("convert_boolean_to_and_of_ors", "False"),
	  BOOL_OPT("apply_constraints_to_boolean_branches", "True"),
	  BOOL_OPT("propagate_knowns_to_prove_conditional", "True"),
	  BOOL_OPT("propagate_knowns_to_simplify_expressions", "True")},
	 "vs_simplify",
	 "every replaced expression equal in its context; a decided condition equal to its literal; "
	 "facts from before a loop only for cells no earlier store instance wrote (an option given "
	 "turns the others off)"},
	{PRIM_REMOVE_NO_OP, "remove_no_op", false, 0,
	 {NAME_OPT("block", PK_BLOCK), BOOL_OPT("use_dataflow_analysis", "True")}, "vs_remove_no_op",
	 "every instance of a removed store a no-op or dead (without dataflow: a no-op); "
	 "`T.evaluate(0)`, empty loops and branches, unused lets and stores into a temporary nothing "
	 "reads later need none"},
	{PRIM_HOIST_EXPRESSION, "hoist_expression", false, 1,
	 {{"conditionals", PK_WORDS, "\"if_else_stmt|if_else_expr|boolean_expression\"", 0,
	   "none|if_else_stmt|if_else_expr|boolean_expression"},
	  NAME_OPT("block", PK_BLOCK), NAME_OPT("loop", PK_LOOP),
	  {"let_bindings", PK_WORDS, "\"all\"", 0, "none|required_by_condition|let_stmt|let_expr|all"}},
	 "vs_hoist_expression",
	 "invariant conditions and let values (as TVM hoists them); evaluating one early cannot fault; "
	 "comparisons its value decides proven; case splits (`loop=`) need no proof"},
	{PRIM_REDUCE_LOOP_EXTENTS, "reduce_loop_extents", false, 0, {NAME_OPT("block", PK_BLOCK)},
	 "vs_reduce_loop_extents", "dropped iterations did nothing; new range inside the old"},
	/* ---- adjacent loops, conditionals, caches ---- */
	{PRIM_MERGE_ADJACENT_LOOPS, "merge_adjacent_loops", false, 2,
	 {{"l1", PK_LOOP, "None", PA_POSITIONAL_ONLY, NULL},
	  {"l2", PK_LOOP, "None", PA_POSITIONAL_ONLY, NULL}},
	 "vs_merge_adjacent_loops",
	 "for i > j, S1(i) and S2(j) commute; no loops named: every adjacent pair, level by level"},
	{PRIM_FISSION, "fission", false, 2,
	 {REQ("loop", PK_LOOP), {"after", PK_INT, "None", 0, NULL}, NAME_OPT("before", PK_LOOP)},
	 "vs_fission, vs_fission_before",
	 "the same condition as merge; `before=L` (one of `after=`, `before=`): every loop "
	 "from `loop` down to L's is fissioned before L, innermost first, each fission proven"},
	{PRIM_MERGE_CONDITIONALS, "merge_conditionals", false, 0,
	 {NAME_OPT("block", PK_BLOCK), BOOL_OPT("strict", "False")}, "vs_merge_conditionals",
	 "conditions identical or complementary, the second read in the state after the first `if`"},
	{PRIM_CACHE_READ, "cache_read", false, 2,
	 {REQ("buffer", PK_BUFFER), NAME_OPT("scope", PK_SCOPE), NAME_OPT("block", PK_BLOCK),
	  {"name", PK_NAME, "\"BUFFER_SCOPE\"", PA_API_ONLY, NULL}},
	 "vs_cache_read", "the staged region covers every access; copy-in reads initialised cells"},
	{PRIM_CACHE_WRITE, "cache_write", false, 2,
	 {REQ("buffer", PK_BUFFER), NAME_OPT("scope", PK_SCOPE), NAME_OPT("block", PK_BLOCK),
	  {"name", PK_NAME, "\"BUFFER_SCOPE\"", PA_API_ONLY, NULL}},
	 "vs_cache_write", "the staged region covers every access; copy-in reads initialised cells"},
	{PRIM_CACHE_READ_TVM, "cache_read", true, 4,
	 {REQ("block", PK_BLOCK), REQ("read_buffer_index", PK_BUFFER_INDEX),
	  REQ("storage_scope", PK_SCOPE), NAME_OPT("consumer_blocks", PK_BLOCKS)},
	 NULL, "TVM's form of `cache_read`: the same proofs"},
	{PRIM_CACHE_WRITE_TVM, "cache_write", true, 4,
	 {REQ("block", PK_BLOCK), REQ("write_buffer_index", PK_BUFFER_INDEX),
	  REQ("storage_scope", PK_SCOPE), NAME_OPT("consumer_blocks", PK_BLOCKS)},
	 NULL, "TVM's form of `cache_write`: the same proofs"},
	{PRIM_REINDEX, "reindex", false, 2, {REQ("block", PK_BLOCK), REQ("buffer", PK_BUFFER_INDEX)},
	 "vs_reindex",
	 "`buffer` is `(\"read\"|\"write\", K)` or a buffer's name; the access is one point of the iter vars (TVM's check); the new buffer's index inside its "
	 "shape; instances sharing a cell of it share the buffer's cell (read), or exactly those "
	 "(write); the copy reads initialised cells; a write read back needs `T.init` to write the "
	 "cell first; the new buffer's shape is non-negative and cannot fault at entry (`proofs/reindex.md`)"},
	{PRIM_REINDEX_CACHE_READ, "reindex_cache_read", false, 4,
	 {REQ("block", PK_BLOCK), REQ("read_buffer_index", PK_BUFFER_INDEX),
	  REQ("storage_scope", PK_SCOPE), REQ("index_map", PK_MAP),
	  {"buffer", PK_BUFFER_INDEX, NULL, PA_ALIAS, NULL}, {"scope", PK_SCOPE, NULL, PA_ALIAS, NULL}},
	 "vs_reindex", "as `reindex`; the index map uses the same iter vars"},
	{PRIM_REINDEX_CACHE_WRITE, "reindex_cache_write", false, 4,
	 {REQ("block", PK_BLOCK), REQ("write_buffer_index", PK_BUFFER_INDEX),
	  REQ("storage_scope", PK_SCOPE), REQ("index_map", PK_MAP),
	  {"buffer", PK_BUFFER_INDEX, NULL, PA_ALIAS, NULL}, {"scope", PK_SCOPE, NULL, PA_ALIAS, NULL}},
	 "vs_reindex", "as `reindex`; the index map uses the same iter vars"},
	/* ---- blocks ---- */
	{PRIM_COMPUTE_AT, "compute_at", false, 4,
	 {REQ("block", PK_BLOCK), REQ("loop", PK_LOOP), BOOL_OPT("preserve_unit_loops", "False"),
	  {"index", PK_INT, "-1", 0, NULL}},
	 "vs_compute_at", "per-iteration region inferred and proven (cover, within, fit, inputs unchanged, new ranges cannot fault); "
	 "a cache packed by `transform_layout` (`[j // 32, k, j % 32]`) is read in logical dimensions"},
	{PRIM_REVERSE_COMPUTE_AT, "reverse_compute_at", false, 4,
	 {REQ("block", PK_BLOCK), REQ("loop", PK_LOOP), BOOL_OPT("preserve_unit_loops", "False"),
	  {"index", PK_INT, "-1", 0, NULL}},
	 "vs_reverse_compute_at", "as `compute_at`, for a consumer moved to the end of the loop's body"},
	{PRIM_DECOMPOSE_REDUCTION, "decompose_reduction", false, 2,
	 {REQ("block", PK_BLOCK), REQ("loop", PK_LOOP)}, "vs_decompose_reduction",
	 "the init block runs exactly the original init instances; each moved init commutes with the "
	 "updates it now precedes"},
	{PRIM_RFACTOR, "rfactor", false, 2, {REQ("loop", PK_LOOP), REQ("factor_axis", PK_INT)}, "vs_rfactor",
	 "`op` associative and commutative on the dtype in the float mode (float `+ *` in `real` mode "
	 "only; refuted in `ieee` mode at values whose roundings differ), the init is `op`'s identity, "
	 "the factored loop is a reduction loop (from the accesses), each spatial point updates its own "
	 "cell, the inits run at the first reduction point, the folded value reads no updated cell, the "
	 "rfactor buffer's shape is non-negative and cannot fault at entry (`proofs/rfactor.md`)"},
	{PRIM_ADD_UNIT_LOOP, "add_unit_loop", false, 1, {REQ("block_or_loop", PK_BLOCK_OR_LOOP)},
	 "vs_add_unit_loop", "none: a fresh loop of one iteration runs its body once"},
	{PRIM_LIFT_ALLOC, "lift_alloc", false, 2,
	 {REQ("buffer", PK_BUFFER), {"n_lifts", PK_INT, "1", 0, NULL}}, "vs_lift_alloc",
	 "Exo's: the allocation leaves `n_lifts` loops or ifs; every read of the buffer finds its cell "
	 "written earlier in the same iteration (no value carried across iterations; replayed as an "
	 "uninitialised read), a parallel or vectorized loop crossed has no race on the now shared "
	 "buffer, the shape is non-negative and cannot fault where it lands (`proofs/lift_alloc.md`)"},
	/* ---- handles and settings (scripts) ---- */
	{PRIM_GET_BLOCK, "get_block", false, 2, {REQ("name", PK_NAME), NAME_OPT("func_name", PK_FUNC)},
	 NULL, "none: a handle to the block"},
	{PRIM_GET_LOOPS, "get_loops", false, 1, {REQ("block", PK_BLOCK)}, NULL,
	 "none: handles to the loops around the block, outermost first"},
	{PRIM_GET_CHILD_BLOCKS, "get_child_blocks", false, 1, {REQ("block_or_loop", PK_BLOCK_OR_LOOP)},
	 NULL, "none: handles to the blocks inside"},
	{PRIM_GET_PRODUCERS, "get_producers", false, 1, {REQ("block", PK_BLOCK)}, NULL,
	 "none: handles to the blocks writing what the block reads"},
	{PRIM_GET_CONSUMERS, "get_consumers", false, 1, {REQ("block", PK_BLOCK)}, NULL,
	 "none: handles to the blocks reading what the block writes"},
	{PRIM_WORK_ON, "work_on", false, 1, {REQ("func", PK_FUNC)}, "vs_work_on",
	 "none: the function the next steps apply to"},
	{PRIM_FLOAT_MODE, "float_mode", false, 1, {{"mode", PK_WORD, NULL, 0, "real|ieee"}},
	 "vs_float_mode", "none: the float mode of the next proofs"},
};

const int prim_count = (int)(sizeof prim_table / sizeof prim_table[0]);

const PrimSpec *prim_find(const char *name, bool tvm_form)
{
	const PrimSpec *any = NULL;
	for (int i = 0; i < prim_count; i++) {
		if (strcmp(prim_table[i].name, name) != 0)
			continue;
		if (prim_table[i].tvm_form == tvm_form)
			return &prim_table[i];
		any = &prim_table[i];
	}
	/* a primitive with one form has it under either */
	for (int i = 0; any && i < prim_count; i++)
		if (&prim_table[i] != any && strcmp(prim_table[i].name, name) == 0)
			return NULL;
	return any;
}

const PrimSpec *prim_spec(PrimId id)
{
	for (int i = 0; i < prim_count; i++)
		if (prim_table[i].id == id)
			return &prim_table[i];
	return NULL;
}

const PrimArg *prim_arg(const PrimSpec *p, const char *name)
{
	for (int i = 0; i < PRIM_MAX_ARGS && p->args[i].name; i++)
		if (strcmp(p->args[i].name, name) == 0)
			return &p->args[i];
	return NULL;
}

/* "a|b|c": whether `w` (n chars) is one of them */
static bool one_of(const char *words, const char *w, size_t n)
{
	for (const char *p = words; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && strncmp(p, w, n) == 0)
			return true;
		p += len + (bar != NULL);
	}
	return false;
}

/* "guard, perfect, cut, cut_and_guard" */
static char *word_list(const char *words)
{
	StrBuf b = {0};
	for (const char *p = words; *p; p++)
		if (*p == '|')
			sb_puts(&b, ", ");
		else
			sb_printf(&b, "%c", *p);
	return sb_take(&b);
}

static bool is_name(const char *s)
{
	if (!*s)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p == 0x7f || strchr("\"'\\()[]{},;=:", *p))
			return false;
	return true;
}

char *prim_check_string(const PrimSpec *p, const PrimArg *arg, const char *value)
{
	StrBuf b = {0};
	switch (arg->kind) {
	case PK_LOOP: case PK_LOOPS: case PK_BLOCK: case PK_BLOCKS: case PK_BLOCK_OR_LOOP:
	case PK_BUFFER: case PK_BUFFER_INDEX: case PK_FUNC: case PK_NAME: case PK_SCOPE:
		if (is_name(value))
			return NULL;
		sb_printf(&b, "%s: %s \"%s\" is not a name (a name has no spaces, quotes, brackets, commas, "
			      "':', ';' or '=')",
			  p->name, arg->name, value);
		return sb_take(&b);
	case PK_WORD:
	case PK_WORDS: {
		bool ok = *value != 0;
		for (const char *w = value; ok && *w;) {
			const char *bar = arg->kind == PK_WORDS ? strchr(w, '|') : NULL;
			size_t n = bar ? (size_t)(bar - w) : strlen(w);
			ok = one_of(arg->words, w, n);
			w += n + (bar != NULL);
			ok = ok && !(bar && !*w);
		}
		if (ok)
			return NULL;
		char *list = word_list(arg->words);
		sb_printf(&b, "%s: %s must be one of %s%s, not \"%s\"", p->name, arg->name, list,
			  arg->kind == PK_WORDS ? " (joined with |)" : "", value);
		free(list);
		return sb_take(&b);
	}
	case PK_INT: case PK_INTS: case PK_BOOL: case PK_MAP: case PK_VALUE:
		return NULL;
	}
	return NULL;
}

/* `split(loop, factor, tail="guard")`: the script's form */
static void doc_signature(StrBuf *b, const PrimSpec *p)
{
	sb_printf(b, "`%s(", p->name);
	bool first = true;
	for (int i = 0; i < PRIM_MAX_ARGS && p->args[i].name; i++) {
		const PrimArg *a = &p->args[i];
		if (a->flags & (PA_API_ONLY | PA_ALIAS))
			continue;
		sb_puts(b, first ? "" : ", ");
		first = false;
		if (a->kind == PK_LOOPS)
			sb_printf(b, "*%s", a->name);
		else if (a->def && (a->flags & PA_POSITIONAL_ONLY))
			sb_printf(b, "[%s]", a->name);
		else if (a->def)
			sb_printf(b, "%s=%s", a->name, a->def);
		else
			sb_puts(b, a->name);
	}
	sb_puts(b, ")`");
	if (p->tvm_form)
		sb_puts(b, " (TVM's)");
}

/* text into a table cell: a | inside a cell would end it */
static void cell(StrBuf *b, const char *text)
{
	for (const char *d = text; *d; d++)
		sb_puts(b, *d == '|' ? "\\|" : (char[]){*d, 0});
}

/* "vs_split, vs_split_tail" -> "`vs_split`, `vs_split_tail`" */
static void api_cell(StrBuf *b, const char *api)
{
	if (!api) {
		sb_puts(b, "scripts only");
		return;
	}
	for (const char *p = api; *p;) {
		size_t n = strcspn(p, ",");
		sb_printf(b, "`%.*s`", (int)n, p);
		p += n;
		for (; *p == ',' || *p == ' '; p++)
			sb_puts(b, *p == ',' ? ", " : "");
	}
}

char *prim_doc_markdown(void)
{
	StrBuf b = {0};
	sb_puts(&b, "| primitive | C API | proven |\n| --- | --- | --- |\n");
	for (int i = 0; i < prim_count; i++) {
		const PrimSpec *p = &prim_table[i];
		StrBuf sig = {0};
		doc_signature(&sig, p);
		char *text = sb_take(&sig);
		sb_puts(&b, "| ");
		cell(&b, text);
		free(text);
		sb_puts(&b, " | ");
		api_cell(&b, p->api);
		sb_puts(&b, " | ");
		cell(&b, p->doc);
		sb_puts(&b, " |\n");
	}
	return sb_take(&b);
}
