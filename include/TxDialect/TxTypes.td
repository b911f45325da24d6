//===- TxTypes.td - tx dialect types -----------------------*- tablegen -*-===//

#ifndef TX_TYPES_TD
#define TX_TYPES_TD

include "TxDialect/TxDialect.td"

class Tx_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tx_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tx_LayerRefType : Tx_Type<"LayerRef", "layer_ref"> {
  let summary = "A reference to a module attribute that may be None";
  let description = [{
    The value of `self.<name>` in Python: either a layer or None. It is only
    ever tested by `tx.guard`; any other use (passing it to a call, storing it,
    returning it) means the reference escapes, and a fuser must refuse to
    remove the layer it names.
  }];
}

def Tx_ContainerType : Tx_Type<"Container", "container"> {
  let summary = "A Python container of activations (dict or list)";
  let description = [{
    A mutable container such as `shared_kv_states`. Writing a slot
    (`tx.container_set`) changes the container, not the storage of the
    buffers it holds; values read back (`tx.container_get`) may alias anything
    stored in it.
  }];
}

#endif // TX_TYPES_TD
