# synopsis.awk: a command's --help usage lines in, the mdoc lines of its
# man page's SYNOPSIS out (docs/synopsis.sh splices them into the page).
#
# The usage grammar is the one lib/cli.h's synopsis forms and the wrappers'
# USAGE write: "usage: NAME FORM", each further form on a line of its own
# starting with NAME, continuation lines indented; in a form, [x] is
# optional, x... repeats, a|b is a choice, -x and --name are flags, words
# with a capital are arguments (Ar), other words literal (Cm).  A word
# written against the one before ("NAME=VALUE", "--name[=SEC]", "PID...")
# stays against it (Ns).

# Split form s into tok[1..ntok]; tatt[i]: tok[i] was written against tok[i-1].
function tokenize(s,    w, att, k) {
	ntok = 0
	att = 0
	while (s != "") {
		if (substr(s, 1, 1) == " ") {
			att = 0
			s = substr(s, 2)
			continue
		}
		if (substr(s, 1, 3) == "...") {
			w = "..."
		} else if (substr(s, 1, 1) ~ /[][|=]/) {
			w = substr(s, 1, 1)
		} else {
			match(s, /^[^][ |=]+/)
			w = substr(s, 1, RLENGTH)
			k = index(w, "...")
			if (k > 1)
				w = substr(w, 1, k - 1)
		}
		ntok++
		tok[ntok] = w
		tatt[ntok] = att
		att = 1
		s = substr(s, length(w) + 1)
	}
}

# The macro (or bare punctuation) for one word.
function word(t) {
	if (t == "|" || t == "..." || t == "=")
		return t
	if (t ~ /^-./)
		return "Fl " substr(t, 2)
	if (t ~ /[A-Z]/)
		return "Ar " t
	return "Cm " t
}

# Whether nothing but closing brackets stands between i and the top
# group's end, and that group is an Op: a nested group there may be an Op
# too (an Op runs to the end of its line).
function last_on_line(i,    k) {
	for (k = i; k <= topclose; k++)
		if (tok[k] != "]")
			return 0
	return topop
}

# The macros of a group's inside, from tok[i] to its "]"; sets pos to that "]".
function inside(i,    out, m, j, sub_) {
	out = ""
	while (i <= ntok && tok[i] != "]") {
		if (tok[i] == "[") {
			sub_ = inside(i + 1)
			j = pos + 1
			m = last_on_line(j) ? "Op " sub_ : "Oo " sub_ " Oc"
		} else {
			m = word(tok[i])
			j = i + 1
		}
		if (tatt[i] && out != "")
			m = "Ns " m
		out = out (out == "" ? "" : " ") m
		i = j
	}
	pos = i
	return out
}

function flush() {
	if (line != "")
		print line
	line = ""
	last = ""
}

# One form: .Nm, then a line per group, flag (with its argument) or operand.
function form(s,    i, k, d, rep, c, t) {
	tokenize(s)
	print ".Nm"
	line = ""
	last = ""
	i = 1
	while (i <= ntok) {
		t = tok[i]
		if (t == "[") {
			flush()
			d = 0
			for (k = i; k <= ntok; k++)
				if (tok[k] == "[")
					d++
				else if (tok[k] == "]" && --d == 0)
					break
			topclose = k
			rep = k < ntok && tok[k + 1] == "..." && tatt[k + 1]
			topop = !rep
			c = inside(i + 1)
			if (rep) {
				print ".Oo " c " Oc Ns ..."
				i = k + 2
			} else {
				print ".Op " c
				i = k + 1
			}
			continue
		}
		if (t ~ /^-./) {
			flush()
			line = "." word(t)
			last = t == "--" ? "end" : "flag"
		} else if (tatt[i] && line != "") {
			line = line " Ns " word(t)
		} else if (last == "flag") {
			line = line " " word(t)
			last = "arg"
		} else if (last != "" && last == substr(word(t), 1, 2)) {
			line = line " " t       # "CMD ARGS": one Ar
		} else {
			flush()
			line = "." word(t)
			last = substr(word(t), 1, 2)
		}
		i++
	}
	flush()
}

NR == 1 {
	if (!sub(/^usage: /, "")) {
		print "synopsis.awk: --help does not start with 'usage: '" > "/dev/stderr"
		bad = 1
		exit 1
	}
	name = $1
	cur = substr($0, length(name) + 2)
	next
}
done { next }                   # read to the end: no SIGPIPE for the writer
/^$/ { done = 1; next }
{
	l = $0
	sub(/^ +/, "", l)
	if (index(l, name " ") == 1) {
		forms[++nf] = cur
		cur = substr(l, length(name) + 2)
	} else {
		cur = cur " " l
	}
}
END {
	if (bad)
		exit 1
	forms[++nf] = cur
	for (f = 1; f <= nf; f++)
		form(forms[f])
}
