graph [
  node [ id 0 label "S1" kind "switch" pipelines 2147483648 ]
  node [ id 1 label "H1" kind "host" ]
  edge [ source 1 target 0 capacity 10.0 ]
]
