/* Source: netzbasis/openbsd-src@89b1ea33cb8518112f9142507d0680181a3b5531:sys/netinet/ip_ah.h (OpenBSD 6.8-current) */

#define	AHCTL_ENABLE	1		/* Enable AH processing */
#define	AHCTL_STATS	2		/* AH stats */
#define	AHCTL_MAXID	3

#define AHCTL_NAMES { \
	{ 0, 0 }, \
	{ "enable", CTLTYPE_INT }, \
	{ "stats", CTLTYPE_STRUCT } \
}
