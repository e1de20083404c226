/* GLPK's environment, one per thread. Debian's GLPK 5.0 keeps it in
 * thread-local storage (so threads may solve at once, each with its own),
 * allocated by a thread's first GLPK call; a thread that ends without
 * glp_free_env loses it. weft__glpk_thread, called before a thread's
 * GLPK calls, arranges that the environment is freed when the thread
 * exits (a thread-specific key's destructor; no GLPK object outlives the
 * call that made it here). The process's main thread keeps its own to the
 * end, as before. It also turns the thread's GLPK terminal output off
 * (a setting of the environment). */
#ifndef WEFT_SYNTH_GLPK_THREAD_H
#define WEFT_SYNTH_GLPK_THREAD_H

void weft__glpk_thread(void);

#endif
