/* Source: netzbasis/openbsd-src@8030d7a93fa9d4cae20487395c7e1c7126b8a954:sys/net/if_etherip.h (OpenBSD 6.0) */

#define	ETHERIPCTL_ALLOW	1	/* accept incoming EtherIP packets */
#define	ETHERIPCTL_STATS	2	/* etherip stats */
#define	ETHERIPCTL_MAXID	3

#define ETHERIPCTL_NAMES {			\
		{ 0, 0 },			\
		{ "allow", CTLTYPE_INT },	\
		{ "stats", CTLTYPE_STRUCT },	\
}
