package zakat

import "slices"

// State is a `zakat_state` value (docs/protocol.md B3): the payer's state.
type State string

// The states docs/protocol.md B3 lists, each its JSON value in CamelCase.
const (
	Johor          State = "johor"
	Kedah          State = "kedah"
	Kelantan       State = "kelantan"
	Melaka         State = "melaka"
	NegeriSembilan State = "negeri_sembilan"
	Pahang         State = "pahang"
	PulauPinang    State = "pulau_pinang"
	Perak          State = "perak"
	Perlis         State = "perlis"
	Sabah          State = "sabah"
	Sarawak        State = "sarawak"
	Selangor       State = "selangor"
	Terengganu     State = "terengganu"
	KualaLumpur    State = "kuala_lumpur"
	Labuan         State = "labuan"
	Putrajaya      State = "putrajaya"
)

// states are the states in B3's order.
var states = [...]State{
	Johor, Kedah, Kelantan, Melaka, NegeriSembilan, Pahang, PulauPinang, Perak,
	Perlis, Sabah, Sarawak, Selangor, Terengganu, KualaLumpur, Labuan, Putrajaya,
}

// States lists every State docs/protocol.md B3 allows, in its order. A
// fresh slice each call.
func States() []State { return slices.Clone(states[:]) }

// Valid reports whether s is one of States.
func (s State) Valid() bool { return slices.Contains(states[:], s) }
