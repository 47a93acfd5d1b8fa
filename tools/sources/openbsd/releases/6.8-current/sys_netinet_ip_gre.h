/* Source: netzbasis/openbsd-src@89b1ea33cb8518112f9142507d0680181a3b5531:sys/netinet/ip_gre.h (OpenBSD 6.8-current) */

#define GRECTL_ALLOW    1		/* accept incoming GRE packets */
#define GRECTL_WCCP     2		/* accept WCCPv1-style GRE packets */
#define GRECTL_MAXID    3

#define GRECTL_NAMES { \
        { 0, 0 }, \
        { "allow", CTLTYPE_INT }, \
        { "wccp", CTLTYPE_INT }, \
}
