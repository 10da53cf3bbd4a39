// One filter of a GET form: a labelled select whose first option means "no filter".
export function SelectFilter({
  label,
  name,
  value,
  options,
  none = 'any',
}: {
  label: string;
  name: string;
  value: string;
  options: readonly (string | { value: string; label: string })[];
  none?: string;
}) {
  return (
    <label>
      {label}
      <select name={name} defaultValue={value}>
        <option value="">{none}</option>
        {options.map((o) => {
          const { value: v, label: l } = typeof o === 'string' ? { value: o, label: o } : o;
          return (
            <option key={v} value={v}>
              {l}
            </option>
          );
        })}
      </select>
    </label>
  );
}
