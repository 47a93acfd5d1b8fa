/* Source: katrinafyi/comp3301@26e979b1b869528443b22c01688cd2f22f31cec8:sys/netinet/ip_gre.h (OpenBSD 7.3-stable) */

#define GRECTL_ALLOW    1		/* accept incoming GRE packets */
#define GRECTL_WCCP     2		/* accept WCCPv1-style GRE packets */
#define GRECTL_MAXID    3

#define GRECTL_NAMES { \
        { 0, 0 }, \
        { "allow", CTLTYPE_INT }, \
        { "wccp", CTLTYPE_INT }, \
}
