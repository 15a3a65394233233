/* cli/main.c — placeholder entry until the CLI lands. */
#include <stdio.h>
int main(void) { fprintf(stderr, "vsched: not built yet\n"); return 2; }
