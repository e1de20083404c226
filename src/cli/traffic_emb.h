/* weft traffic embedding (src/cli/traffic_emb.c; docs/embedding.md). */
#ifndef WEFT_CLI_TRAFFIC_EMB_H
#define WEFT_CLI_TRAFFIC_EMB_H

int cli_traffic_embedding(int argc, char **argv);

#endif
