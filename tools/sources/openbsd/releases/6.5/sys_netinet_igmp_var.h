/* Source: netzbasis/openbsd-src@e0deaa949402a40060d86289184fa9d67af00880:sys/netinet/igmp_var.h (OpenBSD 6.5) */

#define IGMPCTL_STATS		1	/* IGMP statistics */
#define IGMPCTL_MAXID		2

#define IGMPCTL_NAMES { \
	{ 0, 0 }, \
	{ "stats",	CTLTYPE_STRUCT } \
}
