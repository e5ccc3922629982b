package pyjson

import "math/bits"

// Decoding with a plan. A structural pre-scan counts the elements of every
// array and object; the decoder then reserves each container's slots in the
// arenas when it opens and decodes its elements straight into them. Without
// a plan each element is decoded into a scratch stack and copied into the
// arena when its container closes, and the scratch stack is cleared after:
// three writes of every Value and Member instead of one, each of them a
// pointer write the garbage collector's write barrier sees while it marks.
//
// The planned path accepts exactly the grammar of the reference path
// (scanOnce, parseObject, parseArray) and words no error: whenever it
// fails, for a document that is not valid or a plan that does not fit, the
// document is decoded again by the reference path, which gives the error
// (or, for a plan that did not fit, the value). The pre-scan is exact for a
// valid document, so a valid document is decoded once.

// frame is one open container of the pre-scan: its index in the plan, and
// whether anything but white space followed its opening bracket.
type frame struct {
	idx      int32
	nonEmpty bool
}

// prescan fills d.plan for s: for each container in the order it opens, the
// number of commas at its level plus one if it is not empty, which is its
// number of elements when s is valid. It reports false when s cannot be a
// valid document (an unterminated string, brackets that do not balance,
// nesting beyond MaxDepth); the plan is not used then.
func (d *decoder) prescan(s string) bool {
	plan, frames := d.plan[:0], d.frames[:0]
	defer func() { d.plan, d.frames = plan, frames }()
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r', ':':
		case ',':
			if len(frames) > 0 {
				plan[frames[len(frames)-1].idx]++
			}
		case '{', '[':
			if len(frames) > 0 {
				frames[len(frames)-1].nonEmpty = true
			}
			if len(frames) >= MaxDepth {
				return false
			}
			frames = append(frames, frame{idx: int32(len(plan))})
			plan = append(plan, 0)
		case '}', ']':
			if len(frames) == 0 {
				return false
			}
			f := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			if f.nonEmpty {
				plan[f.idx]++
			}
		case '"':
			if len(frames) > 0 {
				frames[len(frames)-1].nonEmpty = true
			}
			i++
			for {
				for ; i+8 <= len(s); i += 8 {
					if m := specials(s, i); m != 0 {
						i += bits.TrailingZeros64(m) >> 3
						break
					}
				}
				if i >= len(s) {
					return false
				}
				if c := s[i]; c == '"' {
					break
				} else if c == '\\' {
					i += 2
				} else {
					i++
				}
			}
		default:
			if len(frames) > 0 {
				frames[len(frames)-1].nonEmpty = true
			}
		}
	}
	return len(frames) == 0
}

// replan forgets what a failed planned decoding did, so that the reference
// path starts from the same state as without a plan. The arenas' slots the
// planned decoding wrote belong to no returned Value; the reference path
// overwrites them, and Reset clears the rest.
func (d *decoder) replan() {
	d.depth, d.err, d.stop, d.ord = 0, nil, -1, 0
	d.valArena, d.memArena = d.valArena[:0], d.memArena[:0]
	d.valNeed, d.memNeed = 0, 0
}

// reserve returns the next n slots of the Value arena, zero.
func (d *decoder) reserveVals(n int) []Value {
	d.valNeed += n
	if n > cap(d.valArena)-len(d.valArena) {
		d.valArena = make([]Value, 0, max(chunk, n))
	}
	start := len(d.valArena)
	d.valArena = d.valArena[:start+n]
	return d.valArena[start : start+n : start+n]
}

// reserveMems returns the next n slots of the Member arena, zero.
func (d *decoder) reserveMems(n int) []Member {
	d.memNeed += n
	if n > cap(d.memArena)-len(d.memArena) {
		d.memArena = make([]Member, 0, max(chunk, n))
	}
	start := len(d.memArena)
	d.memArena = d.memArena[:start+n]
	return d.memArena[start : start+n : start+n]
}

// planned returns the planned element count of the next container.
func (d *decoder) planned() (int, bool) {
	if d.ord >= len(d.plan) {
		return 0, false
	}
	n := int(d.plan[d.ord])
	d.ord++
	return n, true
}

// planValue is scanOnce with a plan: it decodes the value at idx into dst,
// a zero Value that does not move.
func (d *decoder) planValue(idx int, dst *Value) (int, bool) {
	if idx < len(d.s) && (d.s[idx] == '{' || d.s[idx] == '[') {
		if d.depth >= MaxDepth {
			return 0, false
		}
		d.depth++
		var end int
		var ok bool
		if d.s[idx] == '{' {
			dst.Kind = Object
			dst.O, end, ok = d.planObject(idx + 1)
		} else {
			dst.Kind = Array
			dst.A, end, ok = d.planArray(idx + 1)
		}
		d.depth--
		return end, ok
	}
	return d.scanLeaf(idx, dst)
}

// planObject is parseObject with a plan.
func (d *decoder) planObject(idx int) ([]Member, int, bool) {
	n, ok := d.planned()
	if !ok {
		return nil, 0, false
	}
	slots := d.reserveMems(n)
	used := 0
	s := d.s
	end := len(s) - 1
	var index map[string]int
	idx = skipWS(s, idx)
	if idx > end || s[idx] != '}' {
		for {
			if idx > end || s[idx] != '"' {
				return nil, 0, false
			}
			key, next, ok := d.scanString(idx + 1)
			if !ok {
				return nil, 0, false
			}
			idx = skipWS(s, next)
			if idx > end || s[idx] != ':' {
				return nil, 0, false
			}
			idx = skipWS(s, idx+1)
			// dict semantics: first position, last value.
			pos := -1
			if index != nil {
				if p, ok := index[key]; ok {
					pos = p
				}
			} else {
				for i := range slots[:used] {
					if slots[i].Key == key {
						pos = i
						break
					}
				}
			}
			if pos < 0 {
				if used == n {
					return nil, 0, false
				}
				pos = used
				used++
				slots[pos].Key = key
				if index != nil {
					index[key] = pos
				} else if pos >= 16 {
					index = make(map[string]int, 32)
					for i := range slots[:used] {
						index[slots[i].Key] = i
					}
				}
			} else {
				slots[pos].Value = Value{}
			}
			next, ok = d.planValue(idx, &slots[pos].Value)
			if !ok {
				return nil, 0, false
			}
			idx = skipWS(s, next)
			if idx <= end && s[idx] == '}' {
				break
			}
			if idx > end || s[idx] != ',' {
				return nil, 0, false
			}
			idx = skipWS(s, idx+1)
		}
	}
	return slots[:used:used], idx + 1, true
}

// planArray is parseArray with a plan.
func (d *decoder) planArray(idx int) ([]Value, int, bool) {
	n, ok := d.planned()
	if !ok {
		return nil, 0, false
	}
	slots := d.reserveVals(n)
	used := 0
	s := d.s
	end := len(s) - 1
	idx = skipWS(s, idx)
	if idx > end || s[idx] != ']' {
		for {
			if used == n {
				return nil, 0, false
			}
			next, ok := d.planValue(idx, &slots[used])
			used++
			if !ok {
				return nil, 0, false
			}
			idx = skipWS(s, next)
			if idx <= end && s[idx] == ']' {
				break
			}
			if idx > end || s[idx] != ',' {
				return nil, 0, false
			}
			idx = skipWS(s, idx+1)
		}
	}
	return slots[:used:used], idx + 1, true
}
