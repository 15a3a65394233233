/* smt/log_int.h — what the two halves of the proof log share: the
 * ProofLog handle's fields (log.c writes them, log_read.c's --rebuild
 * compares against a captured log) and the small JSON and path writers.
 * Internal to smt/log.c and smt/log_read.c. */
#ifndef VS_SMT_LOG_INT_H
#define VS_SMT_LOG_INT_H

#include "smt/smt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The DiagList given to proof_log_open serves the open only (callers
 * pass short-lived ones): later write failures are kept here, the first
 * one readable through proof_log_error. */
struct ProofLog {
	char *dir;
	FILE *index;
	int nobligations;
	int nrewrites;
	char *error;
	/* proof_log_capture: nothing is written; the index lines and the
	 * query files (NULL for an obligation without one) are kept here */
	bool capture;
	int nlines;
	char **lines;
	char **queries; /* nobligations entries */
	/* what meta.json says (proof_log_set_meta, proof_log_add_schedule) */
	bool has_meta;
	char *vsched_version, *kernel_name, kernel_sha[65];
	FloatMode float_mode;
	unsigned timeout_ms, rlimit;
	int nschedules;
	char **schedule_names;
	char (*schedule_sha)[65];
	int api_steps;
	int nbuilds;
	int *build_after;
	bool *build_int64;
};

/* The copies of the kernel and the schedules, by position: a log's
 * meta.json names them, but only these names are ever read. */
void log_schedule_file_name(int k, char *out, size_t n);
/* s as a JSON string literal, escaped */
void log_json_string(StrBuf *b, const char *s);
/* ,"key": */
void log_json_key(StrBuf *b, const char *key);
/* DIR/FILE, malloc'd; NULL when out of memory */
char *log_path_in(const char *dir, const char *file);

#endif
