/* GLPK's environment freed at a thread's exit (synth/glpk_thread.h). */
#include "synth/glpk_thread.h"

#include <glpk.h>
#include <pthread.h>

static pthread_key_t env_key;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_key_ok;

static void free_env(void *unused)
{
    (void)unused;
    glp_free_env();
}

static void make_key(void)
{
    env_key_ok = pthread_key_create(&env_key, free_env) == 0;
}

void weft__glpk_thread(void)
{
    pthread_once(&env_once, make_key);
    /* Any non-NULL value: the destructor runs for keys set non-NULL. */
    if (env_key_ok && !pthread_getspecific(env_key))
        pthread_setspecific(env_key, &env_key);
    /* The terminal switch is the environment's too: every thread's off. */
    glp_term_out(GLP_OFF);
}
