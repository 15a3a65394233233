/* tests/test_layering.c — the folders use only what the may-use column of
 * ../shared/design/architecture.md allows (scripts/layering.sh, style
 * rule 13): the tree as it stands passes, and each kind of forbidden
 * include planted in a small tree is caught and named. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/testutil.h"

START_TEST(tree_follows_the_architecture_table)
{
	char *out = NULL, *err = NULL;
	int rc = tu_sh("scripts/layering.sh .", &out, &err);
	ck_assert_msg(rc == 0, "forbidden includes (exit %d):\n%s%s", rc, out, err);
	free(out);
	free(err);
}
END_TEST

/* A tree of one file `path` holding `text`, checked by the script. */
static int check_planted(const char *path, const char *text, char **out)
{
	char dir[256], file[512], cmd[1024];
	tu_tmpdir(dir, sizeof dir);
	snprintf(file, sizeof file, "%s/%s", dir, path);
	char *slash = strrchr(file, '/');
	*slash = 0;
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", file);
	ck_assert_int_eq(system(cmd), 0);
	*slash = '/';
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	char *err = NULL;
	snprintf(cmd, sizeof cmd, "scripts/layering.sh '%s'", dir);
	int rc = tu_sh(cmd, out, &err);
	free(err);
	tu_rmdir(dir);
	return rc;
}

static const struct {
	const char *path, *text, *message; /* message: NULL when allowed */
} planted[] = {
	{"rewrites/split.c", "#include \"rewrites/schedule/schedule.h\"\n",
	 "'rewrites/' may not use 'rewrites/schedule/'"},
	{"rewrites/split.c", "#include \"smt/smt.h\"\n", "'rewrites/' may not use 'smt/'"},
	{"kernel/ir.c", "#include \"kernel/analysis/facts.h\"\n",
	 "'kernel/' may not use 'kernel/analysis/'"},
	{"kernel/analysis/facts.c", "#include \"rewrites/rewrite.h\"\n",
	 "'kernel/analysis/' may not use 'rewrites/'"},
	{"smt/solve.c", "#include \"backend/backend.h\"\n", "'smt/' may not use 'backend/'"},
	{"backend/lower.c", "#include \"rewrites/schedule/schedule.h\"\n",
	 "'backend/' may not use 'rewrites/schedule/'"},
	{"backend/lower.c", "#include <z3.h>\n", "only smt/ includes z3.h"},
	{"smt/solve.c", "#include <llvm-c/Core.h>\n", "only backend/ includes llvm-c"},
	{"backend/backend.h", "#include <llvm-c/Core.h>\n", "llvm-c in a backend file"},
	{"cli/main.c", "#include \"kernel/ir.h\"\n", "may include only the public header"},
	{"rewrites/extra/x.c", "#include \"kernel/ir.h\"\n", "not in the layering table"},
	/* allowed */
	{"rewrites/schedule/schedule.c", "#include \"smt/smt.h\"\n#include \"rewrites/rewrite.h\"\n", NULL},
	{"backend/lower.c", "#include \"kernel/analysis/stmt_map.h\"\n#include <llvm-c/Core.h>\n", NULL},
	{"kernel/ir.c", "#include \"ir.h\"\n#include <stdlib.h>\n", NULL},
	{"cli/main.c", "#include \"vsched.h\"\n", NULL},
};

START_TEST(planted_include_is_judged)
{
	char *out = NULL;
	int rc = check_planted(planted[_i].path, planted[_i].text, &out);
	if (planted[_i].message) {
		ck_assert_msg(rc == 1, "%s: expected a violation, exit %d", planted[_i].path, rc);
		ck_assert_msg(strstr(out, planted[_i].message) && strstr(out, planted[_i].path),
			      "%s: expected \"%s\", got:\n%s", planted[_i].path, planted[_i].message, out);
	} else {
		ck_assert_msg(rc == 0, "%s: expected no violation, got:\n%s", planted[_i].path, out);
	}
	free(out);
}
END_TEST

Suite *suite_layering(void)
{
	Suite *s = suite_create("layering");
	TCase *tc = tcase_create("may_use");
	tcase_add_test(tc, tree_follows_the_architecture_table);
	tcase_add_loop_test(tc, planted_include_is_judged, 0, (int)(sizeof planted / sizeof planted[0]));
	suite_add_tcase(s, tc);
	return s;
}
