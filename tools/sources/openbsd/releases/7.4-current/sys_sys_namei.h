/* Source: CobaltBSD/src@826fc1384d40b97a37da503eab1ad9216bf0a960:sys/sys/namei.h (OpenBSD 7.4-current (derivative CobaltBSD import)) */

#define KERN_NCHSTATS_GOODHITS		1
#define KERN_NCHSTATS_NEGHITS		2
#define KERN_NCHSTATS_BADHITS		3
#define KERN_NCHSTATS_FALSEHITS		4
#define KERN_NCHSTATS_MISS		5
#define KERN_NCHSTATS_LONG		6
#define KERN_NCHSTATS_PASS2		7
#define KERN_NCHSTATS_2PASSES		8
#define KERN_NCHSTATS_REVHITS           9
#define KERN_NCHSTATS_REVMISS           10
#define KERN_NCHSTATS_DOTHITS		11
#define KERN_NCHSTATS_DOTDOTHITS	12
#define KERN_NCHSTATS_MAXID		13

#define CTL_KERN_NCHSTATS_NAMES {		\
	{ 0, 0 },				\
	{ "good_hits", CTLTYPE_QUAD },		\
	{ "negative_hits", CTLTYPE_QUAD },	\
	{ "bad_hits", CTLTYPE_QUAD },		\
	{ "false_hits", CTLTYPE_QUAD },		\
	{ "misses", CTLTYPE_QUAD },		\
	{ "long_names", CTLTYPE_QUAD },		\
	{ "pass2", CTLTYPE_QUAD },		\
	{ "2passes", CTLTYPE_QUAD },		\
	{ "ncs_revhits", CTLTYPE_QUAD },	\
	{ "ncs_revmiss", CTLTYPE_QUAD },	\
	{ "ncs_dothits", CTLTYPE_QUAD },	\
	{ "nch_dotdothits", CTLTYPE_QUAD },	\
}
