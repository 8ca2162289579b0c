//! The tree-ensemble operators of the ai.onnx.ml domain end to end: small
//! text models run through the plan and through shape inference. (These
//! tests use both engines, so they live above them, not in `src/ops/ml/`.)

mod testing {
    use onnx_light::runtime::{Plan, RunOptions};
    use onnx_light::tensor::{Tensor, Value};
    use std::collections::HashMap;

    /// Runs a text model on `x` (its one input): its outputs, or the error
    /// text (from building the plan or from running it).
    pub fn run_text(text: &str, x: Tensor) -> Result<Vec<Tensor>, String> {
        let m = onnx_light::text::parse_model(text).map_err(|e| e.to_string())?;
        let plan = Plan::new(&m).map_err(|e| e.to_string())?;
        let name = plan.input_names()[0].clone();
        let r = plan
            .run(
                HashMap::from([(name, Value::Tensor(x))]),
                &RunOptions::default(),
            )
            .map_err(|e| e.to_string())?;
        Ok(r.outputs
            .into_iter()
            .filter_map(|(_, v)| v.into_tensor())
            .collect())
    }

    /// The inferred types of a text model's outputs, as displayed, then
    /// the declared symbols inference tied (`E = 2`).
    pub fn output_types(text: &str) -> Vec<String> {
        let mut m = onnx_light::text::parse_model(text).unwrap_or_else(|e| panic!("{e}"));
        let outs: Vec<String> = m
            .graph
            .as_ref()
            .map(|g| g.output.iter().map(|o| o.name().to_string()).collect())
            .unwrap_or_default();
        let r = onnx_light::shape::infer_model(&mut m);
        let mut types: Vec<String> = outs
            .iter()
            .map(|o| r.get(o).map(|v| v.ty.display()).unwrap_or_default())
            .collect();
        types.extend(
            r.equations
                .iter()
                .map(|e| format!("{} = {}", e.symbol, e.expr)),
        );
        types
    }
}

mod tree_ensemble {
    use super::testing::{output_types, run_text};
    use onnx_light::tensor::Tensor;

    /// Tree 0: `x0 <= 1` ? (`x1 in {2, 5}`, NaN true ? leaf 1 : leaf 2) :
    /// leaf 0; tree 1 is the single leaf 2. Leaves: target 0 = 1, target
    /// 1 = 10, target 0 = 100. Values checked against onnxruntime 1.23 and
    /// the onnx reference.
    fn model(t: &str, extra: &str) -> String {
        format!(
            r#"<ir_version: 10, opset_import: ["" : 17, "ai.onnx.ml" : 5]>
g ({t}[N,C] x) => (y)
{{
  y = ai.onnx.ml.TreeEnsemble <n_targets = 2, aggregate_function = 0,
    nodes_featureids = [0, 1, 0], nodes_truenodeids = [1, 1, 2], nodes_falsenodeids = [0, 2, 2],
    nodes_trueleafs = [0, 1, 1], nodes_falseleafs = [1, 1, 1],
    nodes_missing_value_tracks_true = [0, 1, 0],
    nodes_modes = uint8[3] {{0, 6, 0}}, nodes_splits = {t}[3] {{1.0, 0.0, 0.0}},
    membership_values = {t}[3] {{2.0, 5.0, nan}},
    leaf_targetids = [0, 1, 0], leaf_weights = {t}[3] {{1.0, 10.0, 100.0}},
    tree_roots = [0, 2]{extra}> (x)
}}"#
        )
    }

    const ROWS: [f64; 8] = [0.0, 5.0, 0.0, 3.0, 0.0, f64::NAN, 2.0, 5.0];
    const WANT: [f64; 8] = [50.0, 5.0, 100.0, 0.0, 50.0, 5.0, 50.5, 0.0];

    #[test]
    fn member_sets_missing_tracks_and_single_leaf_trees_in_double() {
        let m = model("double", "");
        let x = Tensor::from_vec(&[4, 2], ROWS.to_vec()).unwrap();
        let y = run_text(&m, x).unwrap().remove(0);
        assert_eq!(y.dtype(), onnx_light::tensor::DataType::Double);
        assert_eq!(y.to_f64_vec().unwrap(), WANT.to_vec());
        assert_eq!(output_types(&m), vec!["double[N,2]"]);
    }

    #[test]
    fn float_and_float16_inputs_keep_their_type() {
        let x32: Vec<f32> = ROWS.iter().map(|&v| v as f32).collect();
        let y = run_text(&model("float", ""), Tensor::from_vec(&[4, 2], x32).unwrap()).unwrap();
        assert_eq!(y[0].dtype(), onnx_light::tensor::DataType::Float);
        assert_eq!(y[0].to_f64_vec().unwrap(), WANT.to_vec());
        let x16: Vec<half::f16> = ROWS.iter().map(|&v| half::f16::from_f64(v)).collect();
        // float16 X with float splits and weights
        let m = model("float", "").replace("float[N,C] x", "float16[N,C] x");
        let y = run_text(&m, Tensor::from_vec(&[4, 2], x16).unwrap()).unwrap();
        assert_eq!(y[0].dtype(), onnx_light::tensor::DataType::Float16);
        assert_eq!(y[0].to_f64_vec().unwrap(), WANT.to_vec());
    }

    #[test]
    fn sum_with_softmax_over_targets() {
        let m = model("double", "").replace("aggregate_function = 0", "aggregate_function = 1");
        let m = m.replace(
            "tree_roots = [0, 2]",
            "tree_roots = [0, 2], post_transform = 1",
        );
        let x = Tensor::from_vec(&[1, 2], vec![2.0, 5.0]).unwrap();
        // scores [101, 0] → softmax
        let y = run_text(&m, x).unwrap().remove(0).to_f64_vec().unwrap();
        assert!((y[0] - 1.0).abs() < 1e-12 && y[1] < 1e-40, "{y:?}");
    }

    #[test]
    fn malformed_attributes_are_errors() {
        let x = || Tensor::from_vec(&[1, 2], vec![0.0, 0.0]).unwrap();
        let bad_mode = model("double", "").replace("{0, 6, 0}", "{0, 9, 0}");
        assert!(run_text(&bad_mode, x()).unwrap_err().contains("mode 9"));
        let bad_root = model("double", "").replace("tree_roots = [0, 2]", "tree_roots = [0, 5]");
        assert!(run_text(&bad_root, x())
            .unwrap_err()
            .contains("tree root 5"));
        let bad_leaf = model("double", "").replace(
            "nodes_falsenodeids = [0, 2, 2]",
            "nodes_falsenodeids = [0, 7, 2]",
        );
        assert!(run_text(&bad_leaf, x())
            .unwrap_err()
            .contains("leaf index 7"));
        // node 1's false side points back at branch 0: a cycle
        let cycle = model("double", "")
            .replace(
                "nodes_falsenodeids = [0, 2, 2]",
                "nodes_falsenodeids = [0, 0, 2]",
            )
            .replace(
                "nodes_falseleafs = [1, 1, 1]",
                "nodes_falseleafs = [1, 0, 1]",
            );
        assert!(run_text(&cycle, x()).unwrap_err().contains("reached twice"));
        let bad_target =
            model("double", "").replace("leaf_targetids = [0, 1, 0]", "leaf_targetids = [0, 2, 0]");
        assert!(run_text(&bad_target, x())
            .unwrap_err()
            .contains("target/class 2"));
        let short =
            model("double", "").replace("nodes_trueleafs = [0, 1, 1]", "nodes_trueleafs = [0, 1]");
        assert!(run_text(&short, x())
            .unwrap_err()
            .contains("nodes_trueleafs"));
    }
}

mod tree_ensemble_classifier {
    use super::testing::{output_types, run_text};
    use onnx_light::tensor::Tensor;

    /// One tree: `x0 <= 0.5` → leaf 1, else leaf 2. Expected values were
    /// checked against onnxruntime 1.23.
    fn model(y: &str, labels: &str, votes: &str, extra: &str) -> String {
        format!(
            r#"<ir_version: 10, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
g (float[N,1] x) => ({y}[N] y, float[N,E] z)
{{
  y, z = ai.onnx.ml.TreeEnsembleClassifier <{labels}, nodes_treeids = [0, 0, 0],
    nodes_nodeids = [0, 1, 2], nodes_featureids = [0, 0, 0],
    nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values = [0.5, 0.0, 0.0],
    nodes_truenodeids = [1, 0, 0], nodes_falsenodeids = [2, 0, 0], {votes}{extra}> (x)
}}"#
        )
    }

    fn run(m: &str) -> (Tensor, Vec<f32>) {
        let x = Tensor::from_vec(&[2, 1], vec![0.0f32, 1.0]).unwrap();
        let mut out = run_text(m, x).unwrap().into_iter();
        let y = out.next().unwrap();
        let z = out.next().unwrap();
        let z = z
            .to_f64_vec()
            .unwrap()
            .into_iter()
            .map(|v| v as f32)
            .collect();
        (y, z)
    }

    #[test]
    fn binary_probabilities_from_one_class_score() {
        let m = model(
            "int64",
            "classlabels_int64s = [-3, 7]",
            "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [0.2, 0.9]",
            "",
        );
        let (y, z) = run(&m);
        assert_eq!(y.to_i64_vec().unwrap(), vec![-3, 7]);
        assert_eq!(z, vec![0.8, 0.2, 0.100_000_024, 0.9]);
        assert_eq!(output_types(&m), vec!["int64[N]", "float[N,E]", "E = 2"]);
    }

    #[test]
    fn binary_margins_with_base_value_and_logistic() {
        let m = model(
            "string",
            "classlabels_strings = [\"no\", \"yes\"]",
            "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [-1.0, 2.0]",
            ", base_values = [0.25], post_transform = \"LOGISTIC\"",
        );
        let (y, z) = run(&m);
        assert_eq!(y.string_values().unwrap(), vec!["no", "yes"]);
        let want = [0.679_178_7, 0.320_821_3, 0.095_349_49, 0.904_650_5];
        for (g, w) in z.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{z:?}");
        }
        assert_eq!(output_types(&m), vec!["string[N]", "float[N,E]", "E = 2"]);
    }

    #[test]
    fn multiclass_softmax_and_argmax_label() {
        let m = model(
            "string",
            "classlabels_strings = [\"a\", \"b\", \"c\"]",
            "class_treeids = [0, 0, 0], class_nodeids = [1, 1, 2], class_ids = [0, 2, 1], class_weights = [1.0, 3.0, 2.0]",
            ", post_transform = \"SOFTMAX\"",
        );
        let (y, z) = run(&m);
        assert_eq!(y.string_values().unwrap(), vec!["c", "b"]);
        let want = [
            0.114_195_2,
            0.042_010_07,
            0.843_794_7,
            0.106_506_97,
            0.786_986,
            0.106_506_97,
        ];
        for (g, w) in z.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{z:?}");
        }
        assert_eq!(output_types(&m), vec!["string[N]", "float[N,E]", "E = 3"]);
    }

    #[test]
    fn two_classes_both_voted_follow_onnxruntime_literal_labels() {
        // onnxruntime labels such a row 1 or 0 (not a class label) by the
        // sign of the second score
        let votes = "class_treeids = [0, 0, 0, 0], class_nodeids = [1, 1, 2, 2], class_ids = [0, 1, 0, 1], class_weights = [0.7, 0.3, 0.2, 0.8]";
        let m = model("int64", "classlabels_int64s = [5, 9]", votes, "");
        let (y, z) = run(&m);
        assert_eq!(y.to_i64_vec().unwrap(), vec![1, 1]);
        assert_eq!(z, vec![0.7, 0.3, 0.2, 0.8]);
        let m = model(
            "int64",
            "classlabels_int64s = [5, 9]",
            votes,
            ", base_values = [0.1, -1.0]",
        );
        let (y, z) = run(&m);
        assert_eq!(y.to_i64_vec().unwrap(), vec![0, 0]);
        assert_eq!(z, vec![0.3, -0.3, 0.8, -0.8]);
    }

    #[test]
    fn bad_labels_and_base_values_are_errors() {
        let votes = "class_treeids = [0, 0], class_nodeids = [1, 2], class_ids = [0, 0], class_weights = [0.2, 0.9]";
        let x = || Tensor::from_vec(&[1, 1], vec![0.0f32]).unwrap();
        let one = model("int64", "classlabels_int64s = [4]", votes, "");
        assert!(run_text(&one, x()).unwrap_err().contains("at least two"));
        let base = model(
            "int64",
            "classlabels_int64s = [4, 5]",
            votes,
            ", base_values = [1.0, 2.0, 3.0]",
        );
        assert!(run_text(&base, x()).unwrap_err().contains("base_values"));
        let class = model(
            "int64",
            "classlabels_int64s = [4, 5]",
            &votes.replace("class_ids = [0, 0]", "class_ids = [0, 2]"),
            "",
        );
        assert!(run_text(&class, x()).unwrap_err().contains("id 2"));
        let unknown_node = model(
            "int64",
            "classlabels_int64s = [4, 5]",
            &votes.replace("class_nodeids = [1, 2]", "class_nodeids = [1, 8]"),
            "",
        );
        assert!(run_text(&unknown_node, x()).unwrap_err().contains("node 8"));
    }
}

mod tree_ensemble_regressor {
    use super::testing::{output_types, run_text};
    use onnx_light::tensor::Tensor;

    /// Two trees: `x0 <= 1.5` (NaN goes true) → 10 / 20, and `x1 > 0` →
    /// 1 / 2; `extra` is spliced into the attributes.
    fn model(extra: &str, out: &str) -> String {
        format!(
            r#"<ir_version: 10, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
g (float[N,2] x) => ({out} y)
{{
  y = ai.onnx.ml.TreeEnsembleRegressor <nodes_treeids = [0, 0, 0, 1, 1, 1],
    nodes_nodeids = [0, 1, 2, 0, 1, 2], nodes_featureids = [0, 0, 0, 1, 0, 0],
    nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
    nodes_values = [1.5, 0.0, 0.0, 0.0, 0.0, 0.0],
    nodes_missing_value_tracks_true = [1, 0, 0, 0, 0, 0],
    nodes_truenodeids = [1, 0, 0, 1, 0, 0], nodes_falsenodeids = [2, 0, 0, 2, 0, 0],
    target_nodeids = [1, 2, 1, 2], target_treeids = [0, 0, 1, 1],
    target_weights = [10.0, 20.0, 1.0, 2.0], {extra}> (x)
}}"#
        )
    }

    fn x() -> Tensor {
        let v = vec![1.0f32, 1.0, 2.0, -1.0, f32::NAN, f32::NAN];
        Tensor::from_vec(&[3, 2], v).unwrap()
    }

    fn values(t: &Tensor) -> Vec<f64> {
        t.to_f64_vec().unwrap()
    }

    #[test]
    fn sums_trees_with_a_double_base_value_and_missing_tracks() {
        let m = model(
            "n_targets = 1, target_ids = [0, 0, 0, 0], base_values_as_tensor = double[1] {0.5}",
            "float[N,1]",
        );
        let y = run_text(&m, x()).unwrap();
        assert_eq!(y[0].shape(), &[3, 1]);
        assert_eq!(values(&y[0]), vec![11.5, 22.5, 12.5]);
        assert_eq!(output_types(&m), vec!["float[N,1]"]);
    }

    #[test]
    fn average_min_max_over_two_targets() {
        // tree 0 votes target 0, tree 1 target 1; base values per target
        let t = "n_targets = 2, target_ids = [0, 0, 1, 1], base_values = [100.0, 200.0]";
        let avg = model(
            &format!("{t}, aggregate_function = \"AVERAGE\""),
            "float[N,2]",
        );
        let y = run_text(&avg, x()).unwrap();
        assert_eq!(
            values(&y[0]),
            vec![105.0, 200.5, 110.0, 201.0, 105.0, 201.0]
        );
        let min = model(&format!("{t}, aggregate_function = \"MIN\""), "float[N,2]");
        let y = run_text(&min, x()).unwrap();
        assert_eq!(
            values(&y[0]),
            vec![110.0, 201.0, 120.0, 202.0, 110.0, 202.0]
        );
        assert_eq!(output_types(&min), vec!["float[N,2]"]);
    }

    #[test]
    fn one_target_ignores_logistic_as_onnxruntime_does_but_two_apply_it() {
        let one = model(
            "n_targets = 1, target_ids = [0, 0, 0, 0], post_transform = \"LOGISTIC\"",
            "float[N,1]",
        );
        assert_eq!(
            values(&run_text(&one, x()).unwrap()[0]),
            vec![11.0, 22.0, 12.0]
        );
        let two = model(
            "n_targets = 2, target_ids = [0, 0, 1, 1], post_transform = \"LOGISTIC\"",
            "float[N,2]",
        );
        let y = values(&run_text(&two, x()).unwrap()[0]);
        let want = 1.0 / (1.0 + (-1.0f64).exp());
        assert!((y[1] - want).abs() < 1e-6, "{y:?}");
    }

    #[test]
    fn malformed_ensembles_are_errors() {
        let bad_child = model("n_targets = 1, target_ids = [0, 0, 0, 0]", "float[N,1]").replace(
            "nodes_falsenodeids = [2, 0, 0, 2",
            "nodes_falsenodeids = [7, 0, 0, 2",
        );
        let e = run_text(&bad_child, x()).unwrap_err();
        assert!(e.contains("false child 7"), "{e}");
        // node 1 of tree 0 becomes a branch back to the root: a cycle
        let cycle = model("n_targets = 1, target_ids = [0, 0, 0, 0]", "float[N,1]")
            .replace("\"BRANCH_LEQ\", \"LEAF\"", "\"BRANCH_LEQ\", \"BRANCH_LEQ\"");
        let e = run_text(&cycle, x()).unwrap_err();
        assert!(e.contains("reached twice"), "{e}");
        let bad_target = model("n_targets = 1, target_ids = [0, 0, 3, 0]", "float[N,1]");
        let e = run_text(&bad_target, x()).unwrap_err();
        assert!(e.contains("id 3"), "{e}");
        let one_feature = Tensor::from_vec(&[1, 1], vec![1.0f32]).unwrap();
        let ok = model("n_targets = 1, target_ids = [0, 0, 0, 0]", "float[N,1]")
            .replace("float[N,2] x", "float[N,C] x");
        let e = run_text(&ok, one_feature).unwrap_err();
        assert!(e.contains("feature 1"), "{e}");
        let missing = model("target_ids = [0, 0, 0, 0]", "float[N,1]");
        assert!(run_text(&missing, x()).unwrap_err().contains("n_targets"));
    }
}
