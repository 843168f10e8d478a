// glibc's malloc extensions (malloc_trim), which the Glibc module leaves out.
#include <malloc.h>
